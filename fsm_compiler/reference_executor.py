"""The reference executor: the result of docs/fsm-language.md section 1, computed sequentially.

One pass over the input with a flat, pre-multiplied transition table (the inner
loop is `itertools.accumulate`, about 0.2 us per byte); counts and matches then
come from the state trace with numpy. It is the oracle the C++ schemes are
checked against, so it stays simple.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from .compiled import CompiledMachine

_BLOCK = 1 << 20


@dataclass(frozen=True)
class RunResult:
    final_state: int | list[int | None]  # a list for a set of several engines
    counts: tuple[int, ...]  # per tag, in machine.tag_names order
    matches: list[tuple[int, int]] | None  # (offset, tag index), by offset then tag order


def state_trace(machine: CompiledMachine, data: bytes, start: int | None = None) -> np.ndarray:
    """The state after each byte: trace[i] = q(i + 1). Starts at `start` or machine.start."""
    class_count = machine.class_count
    flat = (machine.transitions.astype(np.int64) * class_count).reshape(-1).tolist()
    classes = bytes(data).translate(bytes(machine.byte_class.tolist()))
    trace = np.empty(len(classes), dtype=np.int32)
    offset = (machine.start if start is None else start) * class_count
    for begin in range(0, len(classes), _BLOCK):
        block = classes[begin:begin + _BLOCK]
        offsets = list(itertools.accumulate(
            block, lambda state_offset, byte_class: flat[state_offset + byte_class],
            initial=offset))
        offset = offsets[-1]
        trace[begin:begin + len(block)] = np.asarray(offsets[1:], dtype=np.int64) // class_count
    return trace


def run_reference(machine: CompiledMachine, data: bytes, with_matches: bool) -> RunResult:
    """Final state, per-tag counts and (optionally) the sorted match list.

    Visits report `machine.reports(state)`; the final state adds its end-of-data reports.
    """
    trace = state_trace(machine, data)
    final_state = int(trace[-1]) if len(trace) else machine.start
    visits = np.bincount(trace, minlength=machine.state_count)
    counts = visits @ machine.tag_matrix()
    for tag, _ in machine.end_of(final_state):
        counts[tag] += 1
    matches = None
    if with_matches:
        matches = _matches(machine, trace)
        matches += [(len(data) + delta, tag) for tag, delta in machine.end_of(final_state)]
        matches.sort()
    return RunResult(final_state, tuple(int(count) for count in counts), matches)


def _matches(machine: CompiledMachine, trace: np.ndarray) -> list[tuple[int, int]]:
    positions = np.flatnonzero(machine.reporting_mask()[trace])
    states = trace[positions].tolist()
    reports = [machine.reports(state) for state in range(machine.state_count)]
    return [(offset + 1 + delta, tag)
            for offset, state in zip(positions.tolist(), states)
            for tag, delta in reports[state]]


def result_json(
    machine: CompiledMachine, result: RunResult, byte_count: int, seconds: float,
    requested_scheme: str,
) -> dict:
    """The runner's JSON object (docs/fsm-language.md section 8) for a reference run."""
    payload: dict = {
        "machine": machine.name,
        "bytes": byte_count,
        "final_state": machine.final_state_label(result.final_state),
        "counts": dict(zip(machine.tag_names, result.counts)),
    }
    if result.matches is not None:
        payload["matches"] = [[offset, machine.tag_names[tag]] for offset, tag in result.matches]
    payload.update({
        "scheme": "reference",
        "requested_scheme": requested_scheme,
        "reason": "the reference backend runs the machine sequentially in Python",
        "threads": 1,
        "seconds": seconds,
        "gbps": byte_count / seconds / 1e9 if seconds > 0 else 0.0,
    })
    return payload
