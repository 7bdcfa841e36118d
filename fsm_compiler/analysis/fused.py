"""The fused DFA of path fusion: one fused state per vector of current states.

A fused state is the vector `v` of states that the runs from every state reach on
the same bytes: `v[s]` is where the run that started in state `s` is now. The
start is the all-states vector (0, 1, ..., S-1); on byte class `c` the vector
`v` steps to `transitions[v, c]`. Exploration is breadth-first, successors in
class order, and stops at `bound` fused states: a transition to a vector not
stored is `MISSING`, and the run that meets it continues another way (the C++
`fused` scheme continues that chunk as `enum`).

    vectors[f]      the state vector of fused state f (f = 0 is the all-states vector)
    next[f, c]      the fused state after class c, or MISSING
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .analysis import VECTOR_ELEMENT_BUDGET

MISSING = -1


@dataclass(frozen=True)
class FusedDfa:
    vectors: np.ndarray  # (fused states, states) int32
    next: np.ndarray  # (fused states, classes) int32, MISSING where not explored
    complete: bool  # every reachable vector is stored
    bound: int

    @property
    def count(self) -> int:
        return int(self.vectors.shape[0])


def build_fused_dfa(transitions: np.ndarray, bound: int) -> FusedDfa:
    """Explore the vectors reachable from the all-states vector, storing at most `bound`."""
    states, classes = transitions.shape
    by_class = np.ascontiguousarray(transitions.T.astype(np.int32))
    index: dict[bytes, int] = {}
    vectors: list[np.ndarray] = []
    start = np.arange(states, dtype=np.int32)
    index[start.tobytes()] = 0
    vectors.append(start)
    next_rows: list[np.ndarray] = []
    complete = True
    batch = max(1, VECTOR_ELEMENT_BUDGET // (states * classes))
    done = 0
    while done < len(vectors):
        block = np.stack(vectors[done:done + batch])
        successors = np.stack([column[block] for column in by_class], axis=1)  # (b, C, S)
        for row in successors:
            targets = np.full(classes, MISSING, dtype=np.int32)
            for klass, vector in enumerate(row):
                key = vector.tobytes()
                found = index.get(key)
                if found is None and len(vectors) < bound:
                    found = index[key] = len(vectors)
                    vectors.append(vector)
                if found is None:
                    complete = False
                else:
                    targets[klass] = found
            next_rows.append(targets)
        done += len(block)
    return FusedDfa(np.stack(vectors), np.stack(next_rows), complete, bound)

