"""Union of pattern DFAs by product construction, vectorised with numpy.

A pattern set is compiled pattern by pattern: each pattern's minimal DFA comes from
subset construction (dfa.py), and a group of patterns is the product of their DFAs,
explored breadth-first one frontier at a time (one numpy pass per level instead of
one Python step per state and class), then minimised. Products of minimal DFAs are
small next to subset construction over all the patterns' positions at once, and a
group that would pass its state limit is noticed after at most `limit` new states.

A `TaggedDfa` state's reports are one integer (dfa.report_mask: a bit per tag and kind
of report); a product state reports the OR of its parts'.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .byte_classes import partition_by_columns
from .minimise import breadth_first_order, minimise, renumber


@dataclass(frozen=True)
class TaggedDfa:
    """A DFA with start state 0: next = transitions[state, byte_class[byte]]."""

    byte_class: np.ndarray  # (256,) uint8
    transitions: np.ndarray  # (states, classes) int32
    tags: tuple[int, ...]  # per state: its reports as dfa.report_mask

    @property
    def state_count(self) -> int:
        return int(self.transitions.shape[0])


class ProductTooLarge(Exception):
    """The product has more reachable states than its limit."""


def joint_classes(first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                   np.ndarray]:
    """The common refinement of two byte-class maps: (byte_class, first's, second's class
    of each joint class), joint classes numbered by their smallest byte."""
    pair = first.astype(np.int64) * 256 + second.astype(np.int64)
    _, first_byte, inverse = np.unique(pair, return_index=True, return_inverse=True)
    order = np.argsort(first_byte)  # number joint classes by smallest byte
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    byte_class = rank[inverse.reshape(-1)].astype(np.uint8)
    representatives = np.sort(first_byte)
    return byte_class, first[representatives], second[representatives]


def product(first: TaggedDfa, second: TaggedDfa, limit: int) -> TaggedDfa:
    """The reachable product of two DFAs (tags: union); ProductTooLarge past `limit`."""
    byte_class, first_of, second_of = joint_classes(first.byte_class, second.byte_class)
    width = np.int64(second.state_count)
    first_moves = first.transitions[:, first_of].astype(np.int64)
    second_moves = second.transitions[:, second_of].astype(np.int64)
    frontier = np.zeros(1, dtype=np.int64)  # keys first * width + second; start (0, 0)
    levels, count = [frontier], 1
    seen = _KeySet(first.state_count * int(width))
    seen.add(frontier)
    while frontier.size:
        targets = first_moves[frontier // width] * width + second_moves[frontier % width]
        fresh = seen.new(np.unique(targets))
        count += fresh.size
        if count > limit:
            raise ProductTooLarge()
        seen.add(fresh)
        levels.append(fresh)
        frontier = fresh
    keys = np.concatenate(levels)  # state numbers: in discovery order, start first
    order = np.argsort(keys)
    sorted_keys = keys[order]
    targets = first_moves[keys // width] * width + second_moves[keys % width]
    transitions = order[np.searchsorted(sorted_keys, targets)].astype(np.int32)
    first_tags, second_tags = first.tags, second.tags
    tags = tuple(first_tags[int(key // width)] | second_tags[int(key % width)] for key in keys)
    return TaggedDfa(byte_class, transitions, tags)


class _KeySet:
    """The product keys seen so far: a bitmap over all pairs when it is small enough,
    else a sorted array."""

    BITMAP_LIMIT = 1 << 27

    def __init__(self, key_count: int) -> None:
        self.bitmap = np.zeros(key_count, dtype=bool) if key_count <= self.BITMAP_LIMIT else None
        self.known = np.zeros(0, dtype=np.int64)

    def new(self, keys: np.ndarray) -> np.ndarray:
        """The keys (unique, sorted) not seen yet."""
        if self.bitmap is not None:
            return keys[~self.bitmap[keys]]
        return keys[~np.isin(keys, self.known, assume_unique=True)]

    def add(self, keys: np.ndarray) -> None:
        if self.bitmap is not None:
            self.bitmap[keys] = True
        else:
            self.known = np.union1d(self.known, keys)


def renumbered(dfa: TaggedDfa) -> TaggedDfa:
    """The DFA with reachable states in BFS order from 0 and byte classes recomputed, not
    minimised (a product of minimal DFAs is close to minimal; Moore's rounds over a big
    product cost seconds)."""
    order = breadth_first_order(dfa.transitions, 0)
    transitions, tags = renumber(dfa.transitions, dfa.tags, order)
    partition, class_table = partition_by_columns(transitions[:, dfa.byte_class])
    return TaggedDfa(partition.byte_class, class_table.astype(np.int32), tuple(tags))


def minimal(dfa: TaggedDfa) -> TaggedDfa:
    """The minimal DFA: states in BFS order from 0, byte classes recomputed."""
    transitions, tags, start = minimise(dfa.transitions, dfa.tags, 0)
    transitions, tags = renumber(transitions, tags, breadth_first_order(transitions, start))
    partition, class_table = partition_by_columns(transitions[:, dfa.byte_class])
    return TaggedDfa(partition.byte_class, class_table.astype(np.int32), tuple(tags))

