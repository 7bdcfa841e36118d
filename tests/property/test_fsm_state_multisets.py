"""Runs of a DFA from every state as multisets (fsm_compiler/analysis/state_multisets.py) against
the lanes they replace: one lane per start state, stepped one by one."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from parafuse.fsm_compiler.analysis.state_multisets import StateMultisets


@st.composite
def runs(draw):
    states, classes = draw(st.integers(1, 40)), draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    transitions = rng.integers(0, states, (states, classes))
    rows, steps = draw(st.integers(1, 6)), draw(st.integers(0, 12))
    return transitions, rng.integers(0, classes, (steps, rows))


@settings(max_examples=200, deadline=None, derandomize=True)
@given(runs())
def test_multisets_count_like_lanes(run) -> None:
    transitions, classes = run
    states, rows = transitions.shape[0], classes.shape[1]
    lanes = np.tile(np.arange(states), (rows, 1))
    multisets = StateMultisets.all_states(rows, states)
    for step, row_classes in enumerate(classes):
        lanes = transitions[lanes, row_classes[:, None]]
        if step == 0:
            first = StateMultisets.after_one_step(transitions, row_classes)
        multisets = multisets.step(transitions, row_classes)
        if step == 0:
            for name in ("rows", "states", "counts"):
                assert getattr(first, name).tolist() == getattr(multisets, name).tolist()
    for row in range(rows):
        values, counts = np.unique(lanes[row], return_counts=True)  # ascending states
        held = multisets.rows == row
        assert multisets.states[held].tolist() == values.tolist()
        assert multisets.counts[held].tolist() == counts.tolist()
        assert multisets.most_frequent()[row] == values[np.argmax(counts)]  # first: smallest
    assert multisets.distinct().tolist() == [len(np.unique(lane)) for lane in lanes]
