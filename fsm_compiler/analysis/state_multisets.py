"""Many runs of one DFA from every state at once, as multisets of states per row.

The analysis (fsm_compiler/analysis/analysis.py) runs a DFA from all S states at each of up to
256 sample positions: S x positions lanes, most of which merge after a few bytes. Kept
as one (row, state, count) triple per distinct state of a row, sorted by row then
state, a step costs the distinct states, not S lanes, and the counts keep what the
lookback vote needs (how many start states end in each state). Stepping (positions, S)
arrays lane by lane would take tens of seconds over the engines of a big pattern set.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class StateMultisets:
    rows: np.ndarray  # (entries,) int64, ascending
    states: np.ndarray  # (entries,) int64, ascending within a row
    counts: np.ndarray  # (entries,) int64: start states that are in `state` now
    row_count: int

    @classmethod
    def all_states(cls, row_count: int, state_count: int) -> StateMultisets:
        return cls(np.repeat(np.arange(row_count, dtype=np.int64), state_count),
                   np.tile(np.arange(state_count, dtype=np.int64), row_count),
                   np.ones(row_count * state_count, dtype=np.int64), row_count)

    @classmethod
    def after_one_step(cls, transitions: np.ndarray, row_classes: np.ndarray
                       ) -> StateMultisets:
        """`all_states(...).step(transitions, row_classes)`, from one count of each class
        column the rows use (the first step is the costly one: every state is a lane)."""
        state_count = transitions.shape[0]
        used, row_of_used = np.unique(row_classes, return_inverse=True)
        per_class = np.stack([np.bincount(transitions[:, c], minlength=state_count)
                              for c in used.tolist()])
        rows, states = np.nonzero(per_class[row_of_used.reshape(-1)])
        counts = per_class[row_of_used.reshape(-1)[rows], states].astype(np.int64)
        return cls(rows.astype(np.int64), states.astype(np.int64), counts, len(row_classes))

    def step(self, transitions: np.ndarray, row_classes: np.ndarray) -> StateMultisets:
        """Every state of row r moves on class row_classes[r]; equal states merge."""
        state_count = transitions.shape[0]
        moved = transitions[self.states, row_classes[self.rows]].astype(np.int64)
        if self.rows.size == self.row_count:  # one state a row: nothing can merge
            return StateMultisets(self.rows, moved, self.counts, self.row_count)
        keys = self.rows * state_count + moved
        if keys.size * 8 >= self.row_count * state_count:  # many entries: count, no sort
            totals = np.bincount(keys, weights=self.counts, minlength=self.row_count * state_count)
            distinct = np.flatnonzero(totals)
            counts = totals[distinct].astype(np.int64)
        else:
            distinct, inverse = np.unique(keys, return_inverse=True)
            counts = np.bincount(inverse.reshape(-1), weights=self.counts,
                                 minlength=distinct.size).astype(np.int64)
        return StateMultisets(distinct // state_count, distinct % state_count, counts,
                              self.row_count)

    def distinct(self) -> np.ndarray:
        """(rows,) how many distinct states each row holds."""
        return np.bincount(self.rows, minlength=self.row_count)

    def most_frequent(self) -> np.ndarray:
        """(rows,) each row's state with the highest count, ties to the smallest state
        (every row must hold a state)."""
        order = np.lexsort((self.states, -self.counts, self.rows))
        first = np.r_[True, self.rows[order][1:] != self.rows[order][:-1]]
        return self.states[order][first]
