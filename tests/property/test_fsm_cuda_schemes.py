"""The GPU schemes (cpp_runtime/fsm/cuda/) on the emulated device give the reference
executor's result (final state, counts, matches), as the CPU schemes do
(test_fsm_cpp_schemes.py): every sample on empty, one-byte, random and real inputs, random
machines (few and many states, converging and permutation-like, fused DFA complete or cut
short) and random pattern sets; chunk counts 1, 2, 7, 64 and more than the input's bytes
(a chunk boundary after every byte). The drivers also compile with nvcc."""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from parafuse.emitters.fsm.cuda_driver import cuda_table_driver
from parafuse.grammar.diagnostics import CompileError
from tests.property.fsm_cpp_driver import (
    assert_all_equal_reference,
    blob_of,
    configurations,
    random_machine,
)
from tests.property.fsm_regex_strategies import HAYSTACK_BYTES, compile_patterns, pattern_sets
from tests.property.test_fsm_cpp_schemes import (
    SAMPLE_NAMES,
    SETTINGS,
    inputs,
    sample_machine,
)
from tests.required_tools import require_nvcc

GPU_SCHEMES = ("seq", "enum", "spec", "auto")
REAL_BYTES = 1 << 15  # of each sample's own input: the emulated device pays a fault a page
VECTOR_STATES = 64  # kernels.cuh kMaxVector: enum's bound where the fused DFA is partial


def gpu_configs(length: int, schemes=GPU_SCHEMES) -> list[str]:
    return configurations(length, (1,), schemes)


def check(machine, data: bytes, work, matches: bool = True, schemes=GPU_SCHEMES,
          env: dict | None = None) -> list[dict]:
    return assert_all_equal_reference(machine, data, work, gpu_configs(len(data), schemes),
                                      matches=matches, driver=cuda_table_driver(), env=env)


def sample_inputs(name: str) -> dict[str, bytes]:
    real = inputs.GENERATORS[name](REAL_BYTES)
    noise = np.random.default_rng(5).integers(0, 256, 3000, dtype=np.uint8).tobytes()
    return {"empty": b"", "one byte": real[:1], "random": noise, "real": real}


def runnable_schemes(machine, work) -> tuple[str, ...]:
    """Every GPU scheme, less enum where it is refused (a partial fused DFA and more than
    VECTOR_STATES states)."""
    blob, data = work / "probe.blob", work / "probe.input"
    blob.write_bytes(blob_of(machine))
    data.write_bytes(b"")
    done = subprocess.run([str(cuda_table_driver()), str(blob), str(data), "enum:1:1"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 or machine.state_count > VECTOR_STATES, done.stderr
    return GPU_SCHEMES if done.returncode == 0 else ("seq", "spec", "auto")


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_sample_every_gpu_scheme_equals_reference(name: str, tmp_path) -> None:
    """Counts-only runs with every stream late (PF_EMU_LAZY=all), so that a result read
    before its stream is waited for reads stale memory."""
    machine = sample_machine(name)
    schemes = runnable_schemes(machine, tmp_path)
    late = {**os.environ, "PF_EMU_LAZY": "all"}
    for data in sample_inputs(name).values():
        check(machine, data, tmp_path, True, schemes)
        check(machine, data, tmp_path, False, schemes, late)


@pytest.mark.parametrize("kind", ["converging", "permutation"])
@pytest.mark.parametrize("states", [1, 3, 40, 300, 3000])  # 3000: tables past shared memory
def test_random_machines_every_gpu_scheme_equals_reference(kind: str, states: int,
                                                           tmp_path) -> None:
    """Permutation machines never converge: speculation's guesses fail, and what the
    parallel rounds leave wrong is walked in order (the reason says how many chunks)."""
    rng = np.random.default_rng(states * 7 + len(kind))
    for bound in (4, 65536):  # a fused DFA cut short (chunks go on with vectors), a full one
        machine = random_machine(rng, states, int(rng.integers(1, 6)), kind, bound)
        data = rng.integers(0, 256, int(rng.integers(200, 5000)), dtype=np.uint8).tobytes()
        schemes = runnable_schemes(machine, tmp_path)  # (empty inputs: the samples' test)
        results = check(machine, data, tmp_path, schemes=schemes)
        if kind == "permutation" and states >= 40:
            spec = [r["reason"] for r in results if r["scheme"] == "spec" and r["chunks"] > 7]
            assert any("walked in order" in reason for reason in spec), spec


@pytest.mark.parametrize("lazy", ["none", "all"])
@pytest.mark.parametrize("name", ["clexer", "weblog"])
def test_inputs_in_pieces_equal_reference(name: str, lazy: str, tmp_path) -> None:
    """An input of several pieces (777 bytes each here, 1 GiB by default): each piece is
    copied while the one before is walked, and starts where it ended. PF_EMU_LAZY=all runs a
    stream's work only when something waits for it: a missing event between the copies and
    the walks reads a buffer not yet written, or overwritten."""
    machine = sample_machine(name)
    env = {**os.environ, "PARAFUSE_FSM_GPU_PIECE_BYTES": "777", "PF_EMU_LAZY": lazy}
    data = sample_inputs(name)["real"][:5000]
    for matches in (True, False):
        check(machine, data, tmp_path, matches, runnable_schemes(machine, tmp_path), env)


@pytest.mark.parametrize("value", ["abc", "0", "12x", "-5"])
def test_a_piece_size_that_is_no_number_is_refused(value: str, tmp_path) -> None:
    machine = sample_machine("div7")
    blob, data = tmp_path / "m.blob", tmp_path / "m.input"
    blob.write_bytes(blob_of(machine))
    data.write_bytes(b"0123456789")
    done = subprocess.run([str(cuda_table_driver()), str(blob), str(data), "seq:1:1"],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PARAFUSE_FSM_GPU_PIECE_BYTES": value})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"fsm_cuda_table_driver: error: PARAFUSE_FSM_GPU_PIECE_BYTES="
                           f"'{value}' is not a number of bytes of at least 1\n")


def test_enum_past_its_vector_is_refused_in_one_line(tmp_path) -> None:
    machine = random_machine(np.random.default_rng(3), 300, 4, "permutation", 4)
    blob, data = tmp_path / "m.blob", tmp_path / "m.input"
    blob.write_bytes(blob_of(machine))
    data.write_bytes(b"abc" * 100)
    done = subprocess.run([str(cuda_table_driver()), str(blob), str(data), "enum:1:4"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == ("fsm_cuda_table_driver: error: enum on the GPU needs a complete "
                           "fused DFA or at most 64 states; this machine has 300 and a partial "
                           "fused DFA (use spec)\n")


@settings(SETTINGS, max_examples=8)
@given(seed=st.integers(0, 2**32 - 1), states=st.integers(1, 60),
       kind=st.sampled_from(["converging", "permutation"]), length=st.integers(0, 700))
def test_hypothesis_machines_on_the_gpu(seed: int, states: int, kind: str, length: int,
                                        tmp_path) -> None:
    rng = np.random.default_rng(seed)
    machine = random_machine(rng, states, int(rng.integers(1, 5)), kind,
                             int(rng.choice([2, 50, 65536])))
    check(machine, rng.integers(0, 256, length, dtype=np.uint8).tobytes(), tmp_path)


@settings(SETTINGS, max_examples=8)
@given(patterns=pattern_sets, haystack=st.lists(st.sampled_from(HAYSTACK_BYTES), max_size=400))
def test_hypothesis_pattern_sets_on_the_gpu(patterns, haystack, tmp_path) -> None:
    try:
        machine = compile_patterns(patterns)
    except CompileError:
        machine = None
    assume(machine is not None)
    check(machine, bytes(haystack), tmp_path, schemes=runnable_schemes(machine, tmp_path))


def test_the_gpu_drivers_compile_with_nvcc() -> None:
    """The machine, token-set and engine-set drivers: one project."""
    require_nvcc()
    from parafuse.emitters.fsm.cuda_driver import cuda_engine_set_driver, cuda_token_driver
    from parafuse.emitters.toolchain.nvidia import find_nvcc

    nvcc = str(find_nvcc())
    for driver in (cuda_table_driver, cuda_token_driver, cuda_engine_set_driver):
        assert driver(emulated=False, nvcc=nvcc).exists()


def test_auto_enumerates_a_complete_fused_dfa_and_otherwise_speculates_first(tmp_path) -> None:
    """A complete fused DFA (div7): enum. A partial one: spec, which settles on huffman's
    input; on a permutation machine (guesses never settle) enum where a chunk's vector fits
    (40 states) and more chunks than states stay wrong, else the chunks walked in order (300
    states)."""
    def autos(machine, data: bytes, chunks: set[int]) -> list[dict]:
        return [r for r in check(machine, data, tmp_path, schemes=("auto",))
                if r["chunks"] in chunks]

    for name, scheme in (("div7", "enum"), ("huffman", "spec")):
        data = sample_inputs(name)["real"][:20000]  # chunks of 2.8 KiB and 312 bytes
        assert {r["scheme"] for r in autos(sample_machine(name), data, {7, 64})} == {scheme}
    rng = np.random.default_rng(11)
    data = rng.integers(0, 256, 3000, dtype=np.uint8).tobytes()
    runs = autos(random_machine(rng, 40, 3, "permutation", 4), data, {64, 3005})
    assert {r["scheme"] for r in runs} == {"enum"}
    assert all("more than the machine's 40 states: enumerated instead" in r["reason"]
               for r in runs), runs
    runs = autos(random_machine(rng, 300, 3, "permutation", 4), data, {64, 3005})
    assert {r["scheme"] for r in runs} == {"spec"}
    assert all("walked in order" in r["reason"] for r in runs), runs


def test_default_chunks_fill_the_device(tmp_path) -> None:
    """16 KiB chunks where they are at least the threads the device holds at once (the
    emulated device: 2 SMs of 1,024), else that many, down to 1 KiB each."""
    machine = sample_machine("div7")
    blob = tmp_path / "m.blob"
    blob.write_bytes(blob_of(machine))
    chunks = {}
    for kib in (8, 64, 3 << 10, 40 << 10):
        data = tmp_path / f"{kib}.input"
        data.write_bytes(b"0123456789abcdef" * (kib << 6))
        done = subprocess.run([str(cuda_table_driver()), str(blob), str(data), "spec:1:0"],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        chunks[kib] = json.loads(done.stdout)["chunks"]
    assert chunks == {8: 8, 64: 64, 3 << 10: 2048, 40 << 10: 2560}, chunks
