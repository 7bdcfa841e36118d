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


PRODUCT_GROWTH = 2  # see growth_limit
PRODUCT_FLOOR = 1024  # products this small always may join (their tables are small)


def growth_limit(group: TaggedDfa, dfa: TaggedDfa, max_states: int) -> int:
    """The state limit of a product in a set already split into several engines: at most
    PRODUCT_GROWTH times the states of its two parts, or PRODUCT_FLOOR, within
    `max_states`. Products of unanchored patterns multiply states where the patterns
    overlap: packed up to 65536 states, the 148 Nosey Parker rules that fit a DFA took
    921,000 states (205 MB of runtime tables) for 101,000 states alone; with this limit,
    157,000 states."""
    return min(max_states, max(PRODUCT_FLOOR,
                               PRODUCT_GROWTH * (group.state_count + dfa.state_count)))


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
    """The reachable product of two DFAs (tags: union); ProductTooLarge past `limit`.

    Breadth-first, one level at a time. Product states are numbered in an arbitrary but
    fixed order (callers renumber breadth-first or minimise, which is canonical).
    When the pairs fit DENSE_KEYS, a lazily zeroed array maps each pair to its state
    number and duplicates are dropped by two scatters."""
    byte_class, first_of, second_of = joint_classes(first.byte_class, second.byte_class)
    width = np.int64(second.state_count)
    first_moves = first.transitions[:, first_of].astype(np.int64) * width
    second_moves = second.transitions[:, second_of].astype(np.int64)
    key_count = first.state_count * int(width)
    explore = _explore_dense if key_count <= DENSE_KEYS else _explore_sparse
    keys, transitions = explore(first_moves, second_moves, width, key_count, limit)
    return TaggedDfa(byte_class, transitions.astype(np.int32),
                     _pair_tags(first.tags, second.tags, keys // width, keys % width))


DENSE_KEYS = 1 << 25  # pairs: past this, products keep seen pairs sorted instead


def _explore_dense(first_moves, second_moves, width, key_count, limit):
    number = np.zeros(key_count, dtype=np.int32)  # state number + 1; calloc: lazily zeroed
    levels = [np.zeros(1, dtype=np.int64)]  # keys first * width + second; start (0, 0)
    number[0], count, frontier = 1, 1, levels[0]
    while frontier.size:
        targets = (first_moves[frontier // width] + second_moves[frontier % width]).ravel()
        unseen = targets[number[targets] == 0]
        claim = np.arange(count + 1, count + 1 + unseen.size, dtype=np.int32)
        number[unseen] = claim  # of equal keys the last write wins: one claim per key
        fresh = unseen[number[unseen] == claim]
        if count + fresh.size > limit:
            raise ProductTooLarge()
        number[fresh] = np.arange(count + 1, count + 1 + fresh.size, dtype=np.int32)
        count += fresh.size
        levels.append(fresh)
        frontier = fresh
    keys = np.concatenate(levels)
    return keys, number[first_moves[keys // width] + second_moves[keys % width]] - 1


def _explore_sparse(first_moves, second_moves, width, key_count, limit):
    frontier = np.zeros(1, dtype=np.int64)
    levels, count = [frontier], 1
    seen = _KeySet(key_count)
    seen.add(frontier)
    while frontier.size:
        targets = (first_moves[frontier // width] + second_moves[frontier % width]).ravel()
        fresh = np.unique(seen.new(targets))
        count += fresh.size
        if count > limit:
            raise ProductTooLarge()
        seen.add(fresh)
        levels.append(fresh)
        frontier = fresh
    keys = np.concatenate(levels)  # state numbers: in discovery order, start first
    order = np.argsort(keys)
    targets = first_moves[keys // width] + second_moves[keys % width]
    return keys, order[np.searchsorted(keys[order], targets)]


def _pair_tags(first_tags: tuple[int, ...], second_tags: tuple[int, ...],
               first_states: np.ndarray, second_states: np.ndarray) -> tuple[int, ...]:
    """Per product state, the OR of its parts' report masks, computed once per distinct
    pair of masks (states share few)."""
    first_table, first_ids = _mask_ids(first_tags)
    second_table, second_ids = _mask_ids(second_tags)
    pairs = first_ids[first_states] * len(second_table) + second_ids[second_states]
    distinct, inverse = np.unique(pairs, return_inverse=True)
    table = [first_table[pair // len(second_table)] | second_table[pair % len(second_table)]
             for pair in distinct.tolist()]
    return tuple(table[index] for index in inverse.reshape(-1).tolist())


def _mask_ids(tags: tuple[int, ...]) -> tuple[list[int], np.ndarray]:
    """(the distinct masks, per state the index of its mask)."""
    index: dict[int, int] = {}
    ids = np.fromiter((index.setdefault(mask, len(index)) for mask in tags), np.int64,
                      len(tags))
    return list(index), ids


class _KeySet:
    """The product keys seen so far: a bitmap over all pairs when it is small enough,
    else a sorted array."""

    BITMAP_LIMIT = 1 << 27

    def __init__(self, key_count: int) -> None:
        self.bitmap = np.zeros(key_count, dtype=bool) if key_count <= self.BITMAP_LIMIT else None
        self.known = np.zeros(0, dtype=np.int64)

    def new(self, keys: np.ndarray) -> np.ndarray:
        """The keys not seen yet (with repeats)."""
        if self.bitmap is not None:
            return keys[~self.bitmap[keys]]
        return keys[~np.isin(keys, self.known)]

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

