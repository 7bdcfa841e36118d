"""NFA -> DFA: subset construction over byte classes, with the `max_states` limit.

A DFA state is the set of positions that matched the last byte. The start state is
the special set {START}: from it anchored first positions are candidates too. Byte
classes are computed from the positions' byte sets first, so each DFA state has
one transition per class instead of 256.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .byte_classes import BytePartition, partition_by_masks
from .nfa import PositionAutomaton

START = -1
_START_KEY = frozenset({START})


class StateLimitExceeded(Exception):
    """Subset construction met more than `limit` states (the caller names the patterns)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"more than {limit} DFA states")
        self.limit = limit


@dataclass(frozen=True)
class SubsetDfa:
    """A DFA straight from subset construction (not minimised); state 0 is the start."""

    partition: BytePartition
    transitions: np.ndarray  # (states, classes) int32
    state_tags: tuple[frozenset[int], ...]

    @property
    def state_count(self) -> int:
        return int(self.transitions.shape[0])


def subset_construction(automaton: PositionAutomaton, max_states: int) -> SubsetDfa:
    """Determinise `automaton`; raise StateLimitExceeded past `max_states` states."""
    partition = partition_by_masks([*automaton.byte_masks, (1 << 256) - 1])
    classes_of = [partition.classes_in(mask) for mask in automaton.byte_masks]
    index_of: dict[frozenset[int], int] = {_START_KEY: 0}
    keys: list[frozenset[int]] = [_START_KEY]
    rows: list[list[int]] = []
    class_count = partition.class_count
    for key in keys:  # `keys` grows while we walk it: breadth-first
        buckets: list[list[int]] = [[] for _ in range(class_count)]
        for position in _candidates(automaton, key):
            for byte_class in classes_of[position]:
                buckets[byte_class].append(position)
        row = []
        for bucket in buckets:
            target = frozenset(bucket)
            state = index_of.get(target)
            if state is None:
                if len(keys) >= max_states:
                    raise StateLimitExceeded(max_states)
                state = index_of[target] = len(keys)
                keys.append(target)
            row.append(state)
        rows.append(row)
    transitions = np.array(rows, dtype=np.int32).reshape(len(keys), class_count)
    return SubsetDfa(partition, transitions, tuple(_tags(automaton, key) for key in keys))


def _candidates(automaton: PositionAutomaton, key: frozenset[int]) -> set[int]:
    """Positions that may match the next byte after the positions in `key`."""
    candidates = set(automaton.floating_first)
    if key == _START_KEY:
        candidates |= automaton.anchored_first
        return candidates
    for position in key:
        candidates |= automaton.follow[position]
    return candidates


def _tags(automaton: PositionAutomaton, key: frozenset[int]) -> frozenset[int]:
    tags: set[int] = set()
    for position in key:
        tags |= automaton.accepting.get(position, set())
    return frozenset(tags)
