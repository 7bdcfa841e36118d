"""Analysis numbers on machines whose answers are known by construction."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from parafuse.fsm_compiler.analysis.analysis import (
    convergence,
    fused_state_count,
    lookback_accuracy,
)
from parafuse.fsm_compiler.compiled import CompiledMachine
from parafuse.fsm_compiler.options import MachineOptions
from parafuse.fsm_compiler.pipeline import analyse
from parafuse.fsm_compiler.reference_executor import state_trace
from parafuse.grammar.diagnostics import Location


def machine_of(rows: list[list[int]], **options) -> CompiledMachine:
    """A machine over classes 0..K-1, where byte b belongs to class b % K."""
    transitions = np.array(rows, dtype=np.int32)
    classes = transitions.shape[1]
    return CompiledMachine(
        name="m", kind="explicit",
        state_names=tuple(f"s{i}" for i in range(len(rows))), start=0,
        byte_class=(np.arange(256) % classes).astype(np.uint8), transitions=transitions,
        tag_names=(), state_tags=tuple(() for _ in rows),
        options=MachineOptions(**options), location=Location("m.fsm", 1, 1))


def rotation(k: int) -> list[list[int]]:
    """Every byte moves state i to i + 1 (mod k): a permutation machine."""
    return [[(i + 1) % k] for i in range(k)]


def full_transformations(k: int) -> list[list[int]]:
    """Cycle, swap of 0 and 1, and merge of 1 into 0: they generate all k^k maps."""
    cycle = [(i + 1) % k for i in range(k)]
    swap = [1, 0] + list(range(2, k))
    merge = [0, 0] + list(range(2, k))
    return [[cycle[i], swap[i], merge[i]] for i in range(k)]


def classes_of(machine: CompiledMachine, data: bytes) -> np.ndarray:
    return machine.byte_class[np.frombuffer(data, dtype=np.uint8)].astype(np.int64)


RANDOM_BYTES = np.random.default_rng(7).integers(0, 256, 20000, dtype=np.uint8).tobytes()


def test_permutation_machine_never_converges() -> None:
    machine = machine_of(rotation(5))
    for item in convergence(machine, classes_of(machine, RANDOM_BYTES)):
        assert item.never == item.positions > 0
        assert item.median is None and item.p90 is None


def test_reset_machine_converges_in_one_step() -> None:
    machine = machine_of([[0, 1, 2]] * 6)
    for item in convergence(machine, classes_of(machine, RANDOM_BYTES)):
        assert (item.median, item.p90, item.never) == (1, 1, 0)


def test_fused_states_of_known_machines() -> None:
    assert fused_state_count(machine_of(rotation(6)), 1000).count == 6
    two_generators = [[(i + 1) % 4, [1, 0, 2, 3][i]] for i in range(4)]  # all of S4
    assert fused_state_count(machine_of(two_generators), 1000).count == 24
    reset = machine_of([[0, 1, 2], [0, 1, 2], [0, 1, 2]])
    assert fused_state_count(reset, 1000).count == 4  # the all-states vector, 3 constants


@pytest.mark.parametrize("k", [2, 3, 4])
def test_full_transformation_machine_reaches_k_to_the_k(k: int) -> None:
    fused = fused_state_count(machine_of(full_transformations(k)), 10_000)
    assert (fused.count, fused.exceeded) == (k ** k, False)


def test_random_machines_stay_within_k_to_the_k() -> None:
    rng = np.random.default_rng(3)
    for k, classes in itertools.product([2, 3, 4], [1, 2, 4]):
        rows = rng.integers(0, k, (k, classes)).tolist()
        assert fused_state_count(machine_of(rows), 10_000).count <= k ** k


def test_fused_bound_is_reported_when_exceeded() -> None:
    fused = fused_state_count(machine_of(full_transformations(4)), 100)
    assert fused.exceeded and fused.bound == 100 and fused.count == 101


def test_lookback_on_reset_machine_is_always_right() -> None:
    machine = machine_of([[0, 1, 2], [0, 1, 2], [0, 1, 2]])
    classes = classes_of(machine, RANDOM_BYTES)
    accuracy, tried, slow = lookback_accuracy(machine, classes,
                                              state_trace(machine, RANDOM_BYTES), 8)
    assert accuracy == 1.0 and tried > 0 and slow == 0


def test_lookback_on_rotation_breaks_ties_towards_state_zero() -> None:
    machine = machine_of(rotation(4))
    data = bytes(5000)
    trace = state_trace(machine, data)
    accuracy, tried, slow = lookback_accuracy(machine, classes_of(machine, data), trace, 16)
    # Every end state appears once, so the prediction is state 0: right when position % 4 == 0.
    assert tried > 0 and abs(accuracy - 0.25) < 0.1
    # A permutation never brings two paths together: every wrong guess stays wrong.
    assert slow == round((1 - accuracy) * tried)


@pytest.mark.parametrize(("states", "paths", "fits"), [
    (3, {"ssse3"}, "ssse3"), (16, {"avx2", "avx512vbmi"}, "avx2"), (17, {"ssse3"}, None),
    (20, {"avx2"}, "avx2"), (33, {"avx2"}, None), (40, {"avx512vbmi", "avx2"}, "avx512vbmi"),
    (65, {"avx512vbmi"}, "avx512vbmi"), (256, {"avx512vbmi"}, "avx512vbmi"),
    (257, {"avx512vbmi"}, None), (65, {"avx2"}, None),
    (16, {"avx512vl", "avx512vbmi", "avx2"}, "avx512vl"), (17, {"avx512vl", "avx2"}, "avx2"),
    (33, {"avx512vl", "avx2"}, None)])
def test_simd_path_takes_the_machines_its_kernels_fit(states, paths, fits) -> None:
    """The SIMD path a CPU's vector extensions give a machine of `states` states (the
    runtime's fsm/simd/plan.hpp), whatever its reports."""
    from parafuse.fsm_compiler.analysis.simd_fit import simd_path
    assert simd_path(states, frozenset(paths)) == fits


def test_simd_rule_needs_the_groups_counted_in_one_pass() -> None:
    """More than 4 groups are counted in one pass only by the paired kernels (AVX2 and
    AVX-512VL, up to 16 states, up to 8 groups); SSSE3 and VBMI count two per counter too,
    but up to 4."""
    from parafuse.fsm_compiler.analysis.simd_fit import counts_in_one_pass
    assert counts_in_one_pass(12, 5, frozenset({"avx2"})) == "avx2"
    assert counts_in_one_pass(12, 9, frozenset({"avx2"})) is None
    assert counts_in_one_pass(14, 8, frozenset({"avx512vl", "avx2"})) == "avx512vl"
    from parafuse.fsm_compiler.analysis.simd_fit import simd_path  # past 16 states: AVX2's kernels
    assert simd_path(17, frozenset({"avx512vl", "avx2"})) == "avx2"
    assert simd_path(40, frozenset({"avx512vl", "avx2", "avx512vbmi"})) == "avx512vbmi"
    assert counts_in_one_pass(20, 5, frozenset({"avx512vl", "avx2"})) is None
    assert counts_in_one_pass(12, 4, frozenset({"ssse3"})) == "ssse3"
    assert counts_in_one_pass(12, 5, frozenset({"ssse3"})) is None
    assert counts_in_one_pass(40, 4, frozenset({"avx512vbmi"})) == "avx512vbmi"
    assert counts_in_one_pass(40, 5, frozenset({"avx512vbmi"})) is None
    assert counts_in_one_pass(40, 5, frozenset({"avx2"})) is None
    assert counts_in_one_pass(65, 4, frozenset({"avx512vbmi"})) == "avx512vbmi"
    assert counts_in_one_pass(65, 5, frozenset({"avx512vbmi"})) is None


def _reset_rotation(components: int, size: int, classes: int) -> list[list[int]]:
    """`components` disjoint rotations of `size` states; class 0 resets each rotation to its
    first state, every other class rotates it."""
    rows = []
    for state in range(components * size):
        first = state - state % size
        rotated = first + (state - first + 1) % size
        rows.append([first] + [rotated] * (classes - 1))
    return rows


def test_paths_meet_where_a_rare_reset_brings_them_together() -> None:
    # One rotation reset by 1 byte in 64: lookback 8 rarely sees a reset, but from every
    # state the paths meet long before the 4096-byte horizon.
    machine = machine_of(_reset_rotation(1, 5, 64), lookback=8)
    result = analyse(machine, RANDOM_BYTES, "r")
    assert result.lookback_accuracy < 0.5
    one = next(c for c in result.convergence if c.threshold == 1)
    assert one.positions > 0 and one.never == 0


def test_wrong_guesses_recover_where_paths_never_meet() -> None:
    # Two rotations never merge (paths from every state do not meet), but within the true
    # one a reset (1 byte in 8) brings a wrong guess back within a few bytes.
    machine = machine_of(_reset_rotation(2, 3, 8), lookback=8)
    classes = classes_of(machine, RANDOM_BYTES)
    accuracy, tried, slow = lookback_accuracy(machine, classes, None, 8)
    assert tried > 0 and 0.5 <= accuracy < 0.99 and slow == 0
    one = next(c for c in analyse(machine, RANDOM_BYTES, "r").convergence if c.threshold == 1)
    assert one.never == one.positions > 0
