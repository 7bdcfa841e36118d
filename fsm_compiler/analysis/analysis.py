"""Measured properties of a compiled machine that drive the choice of scheme.

- fused-state count: breadth-first exploration of the state vectors reachable from
  the all-states vector (0, 1, ..., S-1), stopping past `max_fused_states`;
- convergence: from random positions of a sample, the steps until the all-states
  vector holds at most 1, 2, 4 distinct states;
- lookback accuracy: how often the most frequent end state of running the
  `lookback` bytes before a position from every state is the true state there,
  and how many wrong guesses have not met the true path within 1 KiB.

docs/fsm.md gives the sampling rules (how many positions, horizon, ties).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..automata.minimise import row_keys
from ..compiled import CompiledMachine
from ..reference_executor import state_trace
from .state_multisets import StateMultisets

CONVERGENCE_THRESHOLDS = (1, 2, 4)
SAMPLE_POSITIONS = 256
CONVERGENCE_HORIZON = 4096
RECOVERY_HORIZON = 1024  # a wrong lookback guess that meets the true path by then is cheap
TRUTH_HORIZON = 1024  # bytes run from every state to find the true state after them
FUSED_MEMORY_BUDGET = 1 << 27  # bytes of stored state vectors
FUSED_WORK_BUDGET = 1 << 30  # table lookups (fused states x states x classes)
VECTOR_ELEMENT_BUDGET = 1 << 22  # elements of positions x states worked on at once
SAMPLE_LIMIT = 4 << 20  # the analysis reads at most this much of a sample
SEED = 20240229


@dataclass(frozen=True)
class FusedStates:
    count: int  # fused states found (all of them unless exceeded)
    bound: int  # the bound that applied
    exceeded: bool
    bound_reason: str = "max_fused_states"  # or "memory" / "work" when those were lower


def fused_bound(machine: CompiledMachine, max_fused_states: int, itemsize: int) -> tuple[int, str]:
    """The exploration bound: max_fused_states, unless memory or work budgets are lower."""
    states, classes = machine.state_count, machine.class_count
    candidates = [(max_fused_states, "max_fused_states"),
                  (FUSED_MEMORY_BUDGET // (states * itemsize), "memory"),
                  (FUSED_WORK_BUDGET // (states * classes), "work")]
    bound, reason = min(candidates, key=lambda item: item[0])
    return max(1, bound), reason


@dataclass(frozen=True)
class Convergence:
    threshold: int  # at most this many distinct states
    median: int | None  # steps; None = never within the horizon
    p90: int | None
    never: int  # positions that did not reach the threshold within the horizon
    positions: int
    horizon: int


def fused_state_count(machine: CompiledMachine, max_fused_states: int) -> FusedStates:
    """Count vectors reachable from the all-states vector, stopping past the bound."""
    states = machine.state_count
    dtype = np.uint8 if states <= 256 else np.uint16 if states <= 65536 else np.uint32
    by_class = np.ascontiguousarray(machine.transitions.T.astype(dtype))
    bound, reason = fused_bound(machine, max_fused_states, dtype().itemsize)
    start = np.arange(states, dtype=dtype)
    seen = {start.tobytes()}
    frontier = [start]
    batch = max(1, VECTOR_ELEMENT_BUDGET // (states * machine.class_count))
    while frontier:
        next_frontier = []
        for begin in range(0, len(frontier), batch):
            vectors = np.stack(frontier[begin:begin + batch])
            successors = np.concatenate([column[vectors] for column in by_class])
            _, first = np.unique(row_keys(successors), return_index=True)
            for row in successors[np.sort(first)]:
                key = row.tobytes()
                if key not in seen:
                    seen.add(key)
                    next_frontier.append(row)
                    if len(seen) > bound:
                        return FusedStates(len(seen), bound, True, reason)
        frontier = next_frontier
    return FusedStates(len(seen), bound, False, reason)


def _nearest_rank(sorted_steps: list[float], quantile: float) -> int | None:
    value = sorted_steps[max(0, math.ceil(quantile * len(sorted_steps)) - 1)]
    return None if math.isinf(value) else int(value)


def convergence(machine: CompiledMachine, classes: np.ndarray) -> list[Convergence]:
    """Steps until the all-states vector has at most 1, 2, 4 states, from random positions.
    The runs are multisets of states (fsm_compiler/analysis/state_multisets.py)."""
    horizon = min(CONVERGENCE_HORIZON, len(classes))
    if horizon == 0:
        return []
    positions = _random_positions(len(classes) - horizon + 1, machine.state_count, 0)
    steps = {t: np.full(len(positions), np.inf) for t in CONVERGENCE_THRESHOLDS}
    runs = None
    distinct = np.full(len(positions), machine.state_count)
    for step in range(horizon + 1):
        for threshold, found in steps.items():
            found[np.isinf(found) & (distinct <= threshold)] = step
        if step == horizon or not np.isinf(steps[1]).any():
            break
        runs = _stepped(runs, machine, classes[positions + step])
        distinct = runs.distinct()
    return [_summarise(threshold, steps[threshold], horizon) for threshold in steps]


def _stepped(runs: StateMultisets | None, machine: CompiledMachine, row_classes: np.ndarray
             ) -> StateMultisets:
    """One step of the runs; None: the runs from every state, not stepped yet."""
    if runs is None:
        return StateMultisets.after_one_step(machine.transitions, row_classes)
    return runs.step(machine.transitions, row_classes)


def _summarise(threshold: int, found: np.ndarray, horizon: int) -> Convergence:
    ordered = sorted(found.tolist())
    return Convergence(threshold, _nearest_rank(ordered, 0.5), _nearest_rank(ordered, 0.9),
                       int(np.isinf(found).sum()), len(ordered), horizon)


def _random_positions(count_available: int, states: int, low: int) -> np.ndarray:
    """Distinct sorted positions in [low, low + count_available), seeded."""
    wanted = min(SAMPLE_POSITIONS, count_available,
                 max(16, VECTOR_ELEMENT_BUDGET // max(1, states)))
    rng = np.random.default_rng(SEED)
    return low + np.sort(rng.choice(count_available, size=wanted, replace=False))


def true_states_after(machine: CompiledMachine, classes: np.ndarray, ends: np.ndarray
                      ) -> np.ndarray:
    """The state after the first ends[i] bytes (ends >= 1), exactly: run from every state
    over the TRUTH_HORIZON bytes before; where all runs meet in one state, that state is
    the true one whatever state the input was in. Only where they do not (or the input
    is shorter) is the input run from its start (a Python step per byte, per engine)."""
    truth = np.full(len(ends), -1, dtype=np.int64)
    far = np.flatnonzero(ends > TRUTH_HORIZON)
    if far.size:
        runs = None
        for step in range(TRUTH_HORIZON):
            runs = _stepped(runs, machine, classes[ends[far] - TRUTH_HORIZON + step])
        met = runs.distinct() == 1
        truth[far[met]] = runs.most_frequent()[met]
    unknown = np.flatnonzero(truth < 0)
    if unknown.size:
        _, first_byte = np.unique(machine.byte_class, return_index=True)  # a byte per class
        representative = first_byte.astype(np.uint8)
        prefix = representative[classes[:int(ends[unknown].max())]].tobytes()
        truth[unknown] = state_trace(machine, prefix)[ends[unknown] - 1]
    return truth


def lookback_accuracy(
    machine: CompiledMachine, classes: np.ndarray, true_states: np.ndarray | None,
    lookback: int
) -> tuple[float | None, int, int]:
    """(fraction of positions where lookback speculation is right, positions tried, wrong
    guesses whose path has not met the true one within RECOVERY_HORIZON bytes).
    `true_states[i]` is the state after i + 1 bytes; None: found by `true_states_after`."""
    if len(classes) <= lookback:
        return None, 0, 0
    positions = _random_positions(len(classes) - lookback, machine.state_count, lookback)
    runs = None
    for step in range(lookback):
        runs = _stepped(runs, machine, classes[positions - lookback + step])
    predicted = runs.most_frequent()
    truth = (true_states_after(machine, classes, positions) if true_states is None
             else true_states[positions - 1])
    wrong = predicted != truth
    slow = _slow_recoveries(machine, classes, positions[wrong], predicted[wrong], truth[wrong])
    return float(np.mean(~wrong)), len(positions), slow


def _slow_recoveries(machine: CompiledMachine, classes: np.ndarray, positions: np.ndarray,
                     guess: np.ndarray, real: np.ndarray) -> int:
    """How many (guess, real) paths from `positions` still differ after RECOVERY_HORIZON
    bytes (or at the end of the sample): the runtime's hspec rule."""
    for step in range(RECOVERY_HORIZON):
        active = (guess != real) & (positions + step < len(classes))
        if not active.any():
            break
        at = classes[np.minimum(positions + step, len(classes) - 1)]
        guess = np.where(active, machine.transitions[guess, at], guess)
        real = np.where(active, machine.transitions[real, at], real)
    return int(np.count_nonzero(guess != real))
