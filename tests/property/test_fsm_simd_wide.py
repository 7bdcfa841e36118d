"""SIMD enumeration past 64 states (cpp_runtime/fsm/simd/kernels_wide.hpp: AVX-512 VBMI
vpermi2b on 2 to 4 registers of lanes) equals the reference executor at every kernel
boundary (64/65, 128/129, 192/193, 256), with 0 to 5 groups of reporting states (5: past
the kernel's counters, recounted from the true starts), input lengths that divide neither
the chunks nor the 255-byte widening, and matches on and off; the scalar lanes and the
merging enumeration agree with it on CPUs without VBMI. The runtime's plan and its Python
mirror (fsm_compiler/analysis/simd_fit.py) choose the same path for every number of states."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from parafuse.fsm_compiler.analysis.simd_fit import cpu_simd_paths, simd_path
from tests.property.fsm_cpp_driver import assert_all_equal_reference, random_machine
from tests.property.test_fsm_simd_enum import SUPPORTED, assert_reason_names_path, exact_groups
from tests.required_tools import require_cxx

PATHS = [path for path in ("avx512vbmi", "scalar") if path in SUPPORTED] + ["none"]
# threads, chunks: 997 chunks of about 8 bytes start in most of the states, so that a
# wrong lane shows
RUNS = ((1, 1), (1, 4), (2, 7), (3, 13), (2, 997))


@pytest.fixture(scope="module", autouse=True)
def compiler() -> None:
    require_cxx()


def with_group_count(machine, groups: int):
    """`machine` with exactly `groups` groups of reporting states (0: none reports)."""
    if groups == 0:
        return dataclasses.replace(machine, state_tags=((),) * machine.state_count)
    return exact_groups(machine, groups)


def spread_groups(machine, groups: int, rng: np.random.Generator):
    """Reporting states spread over the whole machine (so that lanes of every register,
    and plan states past 127, report): state s reports group s % (groups + 1) - 1."""
    lists = [tuple(t for t in range(4) if (mask >> t) & 1) for mask in range(1, 16)][:groups]
    order = rng.permutation(machine.state_count)
    tags = tuple(lists[order[s] % (groups + 1) - 1] if order[s] % (groups + 1) else ()
                 for s in range(machine.state_count))
    return dataclasses.replace(machine, tag_names=("t0", "t1", "t2", "t3"), state_tags=tags)


@pytest.mark.parametrize("states", [64, 65, 128, 129, 192, 193, 256])
def test_wide_kernels_equal_reference(states: int, tmp_path) -> None:
    rng = np.random.default_rng(700 + states)
    data = rng.integers(0, 256, 2 * 4099, dtype=np.uint8).tobytes()
    configs = [f"enum/{path}:{threads}:{chunks}" for path in PATHS for threads, chunks in RUNS]
    for groups in range(6):
        kind = "permutation" if groups % 2 == 0 else "converging"
        machine = random_machine(rng, states, 6, kind)
        machine = (spread_groups(machine, groups, rng) if groups in (2, 4)
                   else with_group_count(machine, groups))
        for matches in (True, False) if groups in (0, 3) else (False,):  # counts last
            results = assert_all_equal_reference(machine, data, tmp_path, configs,
                                                 matches=matches)
            assert_reason_names_path(configs, results, states)
        counted = [r for c, r in zip(configs, results, strict=True) if "avx512vbmi" in c]
        if groups <= 4:  # the VBMI kernels count up to 4 groups in their one pass
            assert all("counting reports per start state" in r["reason"] for r in counted)
        else:
            assert all("recounted from the true starts" in r["reason"] for r in counted)


@pytest.mark.parametrize("states", [16, 17, 32, 33, 64, 65, 128, 129, 256, 257])
def test_plan_and_python_mirror_choose_the_same_path(states: int, tmp_path) -> None:
    """enum without a forced path: the JSON reason names the path simd_fit.simd_path says
    this CPU's plan takes, or says why none runs."""
    rng = np.random.default_rng(900 + states)
    machine = random_machine(rng, states, 4, "permutation")
    data = rng.integers(0, 256, 1001, dtype=np.uint8).tobytes()
    result = assert_all_equal_reference(machine, data, tmp_path, ["enum:1:3"], matches=False)[0]
    path = simd_path(states, cpu_simd_paths())
    if path is None:
        assert "SIMD enumeration (" not in result["reason"], result["reason"]
        if states > 256:
            assert "at most 256 states" in result["reason"], result["reason"]
    else:
        assert_reason_names_path([f"enum/{path}:1:3"], [result], states)


def test_forced_path_past_its_states_says_so(tmp_path) -> None:
    """AVX2 (composed from 16-entry blocks) takes at most 64 states: forced on 65, enum runs
    the merging scalar enumeration and its reason says why; SSSE3 the same past 16."""
    rng = np.random.default_rng(65)
    machine = random_machine(rng, 65, 3, "converging")
    data = rng.integers(0, 256, 999, dtype=np.uint8).tobytes()
    forced = [path for path in ("avx2", "ssse3") if path in SUPPORTED]
    configs = [f"enum/{path}:2:5" for path in forced]
    results = assert_all_equal_reference(machine, data, tmp_path, configs, matches=False)
    for path, result in zip(forced, results, strict=True):
        most = 64 if path == "avx2" else 16
        assert f"SIMD path {path} takes at most {most} states" in result["reason"], result["reason"]
