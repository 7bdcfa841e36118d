"""SIMD enumeration (cpp_runtime/fsm/simd/enum.hpp) under every path this CPU runs, forced
(RunOptions::simd: the driver's SCHEME/PATH), equals the reference executor: machines of
1 to 256 states (at each kernel's boundary: 16/17, 64/65, 128/129, 192/193, 256),
converging and permutation, with 1, 3 and 6 groups of reporting states (6: counted by
the paired AVX2 kernel of up to 16 states, recounted from the true starts elsewhere),
matches on and off, thread counts 1 to 3 and chunk counts that put a boundary after every
byte; and the JSON reason names the path."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import SourceFile
from tests.conftest import SAMPLES
from tests.property.fsm_cpp_driver import (
    assert_all_equal_reference,
    configurations,
    driver_results,
    random_machine,
)
from tests.required_tools import require_cxx

sys.path.insert(0, str(SAMPLES))
import permutation  # noqa: E402

# The words of the JSON reason of each forced path (cpp_runtime/fsm/simd/enum.hpp).
PATH_WORDS = {"scalar": "scalar lanes", "ssse3": "SSSE3 pshufb", "avx2": "AVX2 vpshufb",
              "avx512vl": "AVX-512VL vpshufb", "avx512vbmi": "AVX-512 VBMI vpermb"}
# AVX-512 VBMI past 64 states (cpp_runtime/fsm/simd/kernels_wide.hpp).
WIDE_WORDS = {128: "AVX-512 VBMI vpermi2b, 128 lanes in 2 registers",
              256: "AVX-512 VBMI two vpermi2b and a blend on bit 7"}
# The most states each forced path takes (fsm/simd/plan.hpp simd_path_most_states).
MOST_STATES = {"scalar": 256, "ssse3": 16, "avx2": 64, "avx512vl": 16, "avx512vbmi": 256}


def path_words(path: str, states: int) -> str:
    if path == "avx512vbmi" and states > 64:
        return WIDE_WORDS[128 if states <= 128 else 256]
    return PATH_WORDS[path]
PATH_FLAGS = {"scalar": set(), "ssse3": {"ssse3"}, "avx2": {"avx2"},
              "avx512vl": {"avx2", "avx512f", "avx512bw", "avx512vl"},
              "avx512vbmi": {"avx512f", "avx512bw", "avx512vbmi"}}


def cpu_flags() -> set[str]:
    info = Path("/proc/cpuinfo")
    if not info.exists():
        return set()
    for line in info.read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


SUPPORTED = [path for path, flags in PATH_FLAGS.items() if flags <= cpu_flags()]


def permutation12_source() -> str:
    """12 states: letters rotate the state, digits swap p0 and p1 (samples/permutation.py)."""
    return permutation.permutation_source(12)


def with_groups(machine, rng: np.random.Generator, groups: int):
    """The machine with `groups` distinct tag lists on its reporting states."""
    states = machine.state_count
    tag_lists = [tuple(sorted({g % len(machine.tag_names), (g + 1) % len(machine.tag_names)}))
                 if g >= len(machine.tag_names) else (g,) for g in range(groups)]
    tags = tuple(tag_lists[int(rng.integers(0, groups))] if rng.random() < 0.4 else ()
                 for _ in range(states))
    return dataclasses.replace(machine, state_tags=tags)


@pytest.fixture(scope="module", autouse=True)
def compiler() -> None:
    require_cxx()


def path_configs(input_bytes: int, paths: list[str], states: int) -> list[str]:
    """enum forced to each path that takes `states` states (MOST_STATES) at every thread and
    chunk count of `configurations`."""
    return [config.replace("enum", f"enum/{path}", 1) for path in paths
            if states <= MOST_STATES[path]
            for config in configurations(input_bytes, schemes=("enum",))]


def assert_reason_names_path(configs: list[str], results: list[dict], states: int = 1) -> None:
    for config, result in zip(configs, results, strict=True):
        path = config.split(":")[0].split("/")[1]
        if path in PATH_WORDS:
            assert path_words(path, states) in result["reason"], (config, result["reason"])


@pytest.mark.parametrize("states", [5, 16, 17, 64, 65, 129])
def test_every_path_equals_reference(states: int, tmp_path) -> None:
    rng = np.random.default_rng(states)
    for kind, groups in (("converging", 1), ("permutation", 3), ("permutation", 6)):
        machine = random_machine(rng, states, int(rng.integers(2, 6)), kind)
        machine = dataclasses.replace(machine, tag_names=("t0", "t1", "t2"))
        machine = with_groups(machine, rng, groups)
        data = rng.integers(0, 256, 700, dtype=np.uint8).tobytes()
        pieces = (data,) if kind == "converging" else (b"", data[:1], data)
        for piece in pieces:
            configs = path_configs(len(piece), SUPPORTED, states)
            for matches in (True, False):
                results = assert_all_equal_reference(machine, piece, tmp_path, configs,
                                                     matches=matches)
                assert_reason_names_path(configs, results, states)


def test_permutation_machine_every_path(tmp_path) -> None:
    """Long chunks (counts widened from 8 bits many times) under every path and `none`."""
    text = permutation12_source()
    machine = compile_file(SourceFile("perm12.fsm", text)).machines[0]
    assert machine.state_count == 12
    rng = np.random.default_rng(12)
    alphabet = np.frombuffer(b"abcXYZ0123 .,\n", dtype=np.uint8)
    data = rng.choice(alphabet, 100_000).tobytes()
    configs = [f"enum:{threads}:{chunks}" for threads, chunks in ((1, 1), (2, 7), (3, 64))]
    configs = [config.replace("enum", f"enum/{path}") for path in [*SUPPORTED, "none"]
               for config in configs]
    for matches in (True, False):
        results = assert_all_equal_reference(machine, data, tmp_path, configs, matches=matches)
        assert_reason_names_path(configs, results)


def test_unknown_or_unsupported_path_is_one_clear_error(tmp_path) -> None:
    machine = random_machine(np.random.default_rng(1), 4, 2, "converging")
    for value in ("sse9", *(p for p in PATH_FLAGS if p not in SUPPORTED)):
        with pytest.raises(AssertionError, match=f"SIMD path '?{value}"):
            driver_results(machine, b"abc", [f"enum/{value}:1:2"], tmp_path)
    env = dict(os.environ, PARAFUSE_FSM_SIMD="sse9")  # the variable, where no option is given
    with pytest.raises(AssertionError, match="unknown SIMD path 'sse9'"):
        driver_results(machine, b"abc", ["enum:1:2"], tmp_path, env=env)
    assert "scalar lanes" in driver_results(machine, b"abc", ["enum:1:2"], tmp_path, env=dict(
        os.environ, PARAFUSE_FSM_SIMD="scalar"))[0]["reason"]


def test_measured_auto_equals_reference_and_explains(tmp_path) -> None:
    """`auto` with its probes forced on small inputs (PARAFUSE_FSM_PROBE_MIN_BYTES): exact
    whatever it picks, and its reason lists the probes and the analysis rules' pick; a
    repeated run in the same process reuses the measured choice and says so."""
    env = dict(os.environ, PARAFUSE_FSM_PROBE_MIN_BYTES="1")
    rng = np.random.default_rng(8)
    machines = [compile_file(SourceFile("perm12.fsm", permutation12_source())).machines[0],
                random_machine(rng, 5, 3, "converging"), random_machine(rng, 300, 4, "converging"),
                random_machine(rng, 90, 4, "permutation", 50)]
    for machine in machines:
        data = rng.choice(np.frombuffer(b"abcXYZ0123 .,\n", dtype=np.uint8), 5000).tobytes()
        configs = ["auto:1:1", "auto:1:4", "auto:2:7", "auto:3:64", "auto:2:7"]
        results = assert_all_equal_reference(machine, data, tmp_path, configs, env=env)
        # the same run again in the same process: the measured choice is remembered
        again = results.pop()
        assert again["reason"].startswith("as measured by an earlier run"), again["reason"]
        assert again["scheme"] == results[2]["scheme"]
        for config, result in zip(configs, results, strict=False):
            if config.endswith(":1"):  # one chunk: nothing to probe
                continue
            assert result["reason"].startswith("measured: every scheme ran"), result["reason"]
            assert "the analysis rules would pick" in result["reason"]
            assert f"picked {result['scheme']}" in result["reason"]


def exact_groups(machine, groups: int):
    """The machine with exactly `groups` groups of reporting states (distinct tag lists
    over 4 tags), two states each where the states allow, the rest not reporting."""
    lists = [tuple(t for t in range(4) if (mask >> t) & 1) for mask in range(1, 16)][:groups]
    reporting = min(machine.state_count, 2 * groups)
    tags = tuple(lists[s % groups] if s < reporting else () for s in range(machine.state_count))
    return dataclasses.replace(machine, tag_names=("t0", "t1", "t2", "t3"), state_tags=tags)


@pytest.mark.parametrize("states", [9, 16, 17, 64])
def test_nibble_kernels_count_two_to_eight_groups(states: int, tmp_path) -> None:
    """Two groups per 8-bit counter (an odd last group by compare): the paired kernels
    (AVX2 and AVX-512VL) up to 16 states with 2 to 8 groups (two chunks share a register,
    cpp_runtime/fsm/simd/kernels_paired.hpp); SSSE3 up to 16 states
    (fsm/simd/kernels_ssse3_nibbles.hpp) and the VBMI vpermb kernel for 17-64
    (fsm/simd/kernels_vbmi_nibbles.hpp) with 2 to 4, past which they recount: chunks long
    enough for many nibble rounds (15 bytes)
    and widenings (255), with lengths that are multiples of neither."""
    rng = np.random.default_rng(40 + states)
    nibbles = "avx2" if states <= 16 else "avx512vbmi"
    paths = [path for path in SUPPORTED if path in (nibbles, "avx512vl", "ssse3", "scalar")
             and states <= MOST_STATES[path]]
    for groups in range(2, 9):
        kind = "permutation" if groups % 2 else "converging"
        machine = exact_groups(random_machine(rng, states, 4, kind), groups)
        data = rng.integers(0, 256, 4099, dtype=np.uint8).tobytes()
        configs = [f"enum/{path}:{threads}:{chunks}" for path in paths
                   for threads, chunks in ((1, 1), (1, 4), (2, 8), (3, 13), (2, 999))]
        results = assert_all_equal_reference(machine, data, tmp_path, configs, matches=False)
        assert_reason_names_path(configs, results, states)
        one_pass = [r for c, r in zip(configs, results, strict=True)  # VBMI, SSSE3: 2-4
                    if "scalar" not in c and ("/avx2" in c or "/avx512vl" in c or groups <= 4)]
        assert all("counting reports per start state" in r["reason"] for r in one_pass)


# threads, chunks: one chunk alone; two (a pair); three (a pair and one alone); four (two
# pairs in lockstep); 8 and 13 over 2 and 3 threads; 997 chunks of about 5 bytes (shorter
# than a 15-byte nibble round, starting in most states)
PAIRED_RUNS = ((1, 1), (1, 2), (1, 3), (1, 4), (2, 8), (3, 13), (2, 997))


@pytest.mark.parametrize("states", [9, 14, 16])
def test_paired_kernels_equal_reference_zero_to_six_groups(states: int, tmp_path) -> None:
    """The paired kernels of up to 16 states (cpp_runtime/fsm/simd/kernels_paired.hpp) under
    every path this CPU runs them on: avx2, and avx512vl (the same code built for AVX-512
    BW/VL, unrolled for every group count), beside the scalar lanes: 0 to 6 groups of
    reporting states counted in the one pass, chunk counts that leave chunks of unequal
    lengths, and an input whose length divides neither 15 (a nibble round) nor 255 (a
    widening); the reason names the path and says the counts came from the one pass."""
    rng = np.random.default_rng(1500 + states)
    paths = [path for path in ("avx512vl", "avx2", "scalar") if path in SUPPORTED]
    data = rng.integers(0, 256, 3 * 2003, dtype=np.uint8).tobytes()
    configs = [f"enum/{path}:{threads}:{chunks}" for path in paths
               for threads, chunks in PAIRED_RUNS]
    for groups in range(7):
        machine = random_machine(rng, states, 5, "permutation" if groups % 2 else "converging")
        machine = (exact_groups(machine, groups) if groups else
                   dataclasses.replace(machine, state_tags=((),) * states))
        results = assert_all_equal_reference(machine, data, tmp_path, configs, matches=False)
        assert_reason_names_path(configs, results, states)
        vector = [r for c, r in zip(configs, results, strict=True) if "/scalar" not in c]
        assert all("counting reports per start state" in r["reason"] for r in vector)


@pytest.mark.skipif("avx2" not in SUPPORTED, reason="needs AVX2")
@pytest.mark.parametrize("states", [3, 12, 16])
def test_two_bytes_per_step_equals_reference(states: int, tmp_path) -> None:
    """Up to 16 states and at most one group on AVX2: two bytes per step
    (cpp_runtime/fsm/simd/kernels_stride2.hpp) where PARAFUSE_FSM_SIMD_STRIDE is unset or 2,
    one byte per step where it is 1, both equal to the reference: 0 and 1 groups, chunks of
    unequal lengths (the bytes past the last 8-byte word run one per step), an input long
    enough for several 248-byte widenings and lengths that divide neither; the reason says
    which ran. Two groups, or more byte classes than the rows take (forced: 128), step one
    byte at a time whatever the variable says."""
    rng = np.random.default_rng(2200 + states)
    data = rng.integers(0, 256, 3 * 2003 + 5, dtype=np.uint8).tobytes()
    configs = [f"enum/avx2:{threads}:{chunks}" for threads, chunks in PAIRED_RUNS]
    for groups, classes, stride in ((0, 5, ""), (1, 5, ""), (1, 5, "2"), (1, 5, "1"),
                                    (0, 7, "1"), (2, 5, "2"), (1, 200, "2"), (1, 60, ""),
                                    (1, 60, "2")):
        kind = "permutation" if groups else "converging"
        machine = random_machine(rng, states, classes, kind)
        machine = (exact_groups(machine, groups) if groups else
                   dataclasses.replace(machine, state_tags=((),) * states))
        env = dict(os.environ, PARAFUSE_FSM_SIMD_STRIDE=stride)
        results = assert_all_equal_reference(machine, data, tmp_path, configs, matches=False,
                                             env=env)
        # bytes whose columns are equal share a class of the plan; 32-byte rows per pair
        rows_bytes = 32 * len({tuple(column) for column in machine.transitions.T}) ** 2
        two = groups <= 1 and stride != "1" and rows_bytes <= (64 if not stride else 512) << 10
        for result in results:
            assert ("two bytes per step" in result["reason"]) == two, (groups, classes, stride)
            assert "counting reports per start state" in result["reason"]
            # one byte per step not asked for: the reason says why
            why = "one byte per step: " + (f"{groups} groups" if groups > 1 else "")
            assert (why in result["reason"]) == (not two and stride != "1"), result["reason"]


def test_a_bad_stride_is_one_clear_error(tmp_path) -> None:
    machine = random_machine(np.random.default_rng(2), 40, 3, "converging")
    env = dict(os.environ, PARAFUSE_FSM_SIMD_STRIDE="3")
    with pytest.raises(AssertionError, match="PARAFUSE_FSM_SIMD_STRIDE='3': use 1, 2 or auto"):
        driver_results(machine, b"abc", ["enum:1:2"], tmp_path, env=env)
