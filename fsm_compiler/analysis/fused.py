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

from ..automata.minimise import row_keys
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


# Past this many states, a fused vector's successors are told apart by the classes' images
# of the states it holds (_distinct_successors) before any is hashed.
WIDE_VECTOR_STATES = 1024


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

    def numbered(vector: np.ndarray) -> int:
        """The fused state of `vector`, stored if new and the bound allows; else MISSING."""
        nonlocal complete
        key = vector.tobytes()
        found = index.get(key)
        if found is None and len(vectors) < bound:
            found = index[key] = len(vectors)
            vectors.append(vector)
        if found is None:
            complete = False
            return MISSING
        return found

    if states > WIDE_VECTOR_STATES:
        done = 0
        while done < len(vectors):
            vector = vectors[done]
            representative, of_class = _distinct_successors(by_class, vector)
            found = [numbered(by_class[klass][vector]) for klass in representative]
            next_rows.append(np.array(found, dtype=np.int32)[of_class])
            done += 1
        return FusedDfa(np.stack(vectors), np.stack(next_rows), complete, bound)
    batch = max(1, VECTOR_ELEMENT_BUDGET // (states * classes))
    done = 0
    while done < len(vectors):
        block = np.stack(vectors[done:done + batch])
        successors = np.stack([column[block] for column in by_class], axis=1)  # (b, C, S)
        next_rows.extend(np.array([numbered(vector) for vector in row], dtype=np.int32)
                         for row in successors)
        done += len(block)
    return FusedDfa(np.stack(vectors), np.stack(next_rows), complete, bound)


def _distinct_successors(by_class: np.ndarray, vector: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray]:
    """The classes whose successors of `vector` differ, one for each distinct successor in
    class order, and for every class the index of its successor among them. Two classes
    give the same successor exactly when they map each state the vector holds alike, and
    a wide vector holds few distinct states (a 5,000-byte literal's: a handful), so the
    classes are compared on those alone and each distinct successor is built and hashed
    once instead of once a class."""
    held = np.unique(vector)
    _, first, of_class = np.unique(row_keys(by_class[:, held]), return_index=True,
                                   return_inverse=True)
    order = np.argsort(first, kind="stable")  # distinct successors in class order
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order], rank[of_class.reshape(-1)]
