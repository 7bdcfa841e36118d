"""Subset construction over position bitsets, many states at a time with numpy.

The same DFA as the state-by-state construction (`dfa.subset_construction_by_state`,
the definition and the tests' oracle): the same states, numbered the same way
(breadth-first, targets in class order), the same reports. A state's key is
(category of the last byte, positions bitset, delayed tags, pending tags), one row of
bytes; the states waiting in the queue are expanded a block at a time:

1. the (state, position) pairs of the block's bitsets, joined with the automaton's
   edges (CSR arrays) give (state, target, condition) triples; a triple counts for
   a next-byte category when its condition holds at (the state's category, that
   category): one boolean scatter per category, plus the first positions;
2. per byte class: candidates of its category AND the class's positions, packed to
   bytes, prefixed by the category and followed by the tag bits the next state
   carries: the target keys, one row per (state, class);
3. distinct rows are numbered by `np.unique`, looked up in a dict of known keys;
   unknown ones become new states in order of first appearance, which is the order
   in which the one-state-at-a-time construction meets them.

Tag reports come the same way: (state, accepting position) pairs joined with the
accepting conditions, OR-reduced per (state, tag), read at the state's category.

Before: subset construction stepped one state and one class at a time in Python
(~50 us a state, most of `boostfsm check` on big rule sets). After: this module; the
old loop stays as the reference.
"""

from __future__ import annotations

import numpy as np

from .assertions import ALWAYS, END, FINAL_NEWLINE, NEWLINE, OTHER, ROW, START
from .assertions import WORD as WORD_CATEGORY
from .byte_classes import BytePartition
from .nfa import PositionAutomaton

BLOCK_CELLS = 1 << 22  # (states x classes x key bytes) expanded at once, at most
HASH_SEEDS = 3  # a hash collision between two keys (never seen) retries with a new seed
_NEXT_CATEGORIES = (WORD_CATEGORY, NEWLINE, OTHER)


class HashCollision(Exception):
    """Two distinct keys hashed alike: the construction is retried with another seed."""


def _packed_rows(rows: list[list[int]], width: int) -> np.ndarray:
    """Per row, the set bits given as column lists, packed little-endian to bytes."""
    dense = np.zeros((len(rows), width), dtype=bool)
    for index, columns in enumerate(rows):
        dense[index, columns] = True
    return np.packbits(dense, axis=1, bitorder="little")


class _Tables:
    """The automaton as packed tables: per position, the positions that follow it
    (one table per distinct edge condition), the first positions per condition, and
    per position and tag the accepting condition."""

    def __init__(self, automaton: PositionAutomaton, tag_index: dict[int, int]) -> None:
        positions = automaton.position_count
        conditions = sorted({c for edges in automaton.follow for c in edges.values()}
                            | set(automaton.first.values()) | {ALWAYS})
        self.conditions = np.array(conditions, dtype=np.int64)
        self.follow = np.stack([  # (conditions, positions + 1, bytes); row `positions`: none
            _packed_rows([[q for q, c in edges.items() if c == condition]
                          for edges in automaton.follow] + [[]], positions)
            for condition in conditions])
        self.first = _packed_rows([[q for q, c in automaton.first.items() if c == condition]
                                   for condition in conditions], positions)
        self.accept = np.zeros((positions + 1, len(tag_index)), dtype=np.int64)
        for q, tags in automaton.accepting.items():
            for t, c in tags.items():
                self.accept[q, tag_index[t]] |= c
        self.empty = np.zeros(len(tag_index), dtype=np.int64)
        for t, c in automaton.empty_accepts.items():
            self.empty[tag_index[t]] |= c


class VectorisedSubsets:
    """Builds the subset DFA of one automaton (see the module docstring)."""

    def __init__(self, automaton: PositionAutomaton, partition: BytePartition,
                 class_category: list[int], max_states: int) -> None:
        self.assertions = automaton.has_assertions
        tags = sorted({t for edges in automaton.accepting.values() for t in edges}
                      | set(automaton.empty_accepts))  # as dfa._tags_of
        self.tag_count = len(tags)
        self.tables = _Tables(automaton, {t: i for i, t in enumerate(tags)})
        self.positions = automaton.position_count
        self.class_category = np.array(class_category, dtype=np.int64)
        self.class_count = partition.class_count
        self.max_states = max_states
        masks = np.zeros((self.positions, 256), dtype=bool)
        for position, mask in enumerate(automaton.byte_masks):
            masks[position] = np.unpackbits(
                np.frombuffer(mask.to_bytes(32, "little"), np.uint8), bitorder="little")
        class_positions = masks[:, np.array(partition.representatives, dtype=np.int64)].T
        self.class_bits = np.packbits(class_positions, axis=1, bitorder="little")
        self.position_bytes = self.class_bits.shape[1]
        self.tag_bytes = (self.tag_count + 7) // 8
        used = 1 + self.position_bytes + 2 * self.tag_bytes
        self.key_bytes = used + (-used) % 8  # whole 64-bit words, for hashing
        self.categories = [(n, np.nonzero(self.class_category == n)[0])
                           for n in _NEXT_CATEGORIES if (self.class_category == n).any()]

    def run(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(transitions, reports: (states, 4, tags) bool, the (now, delayed, at_end,
        at_end_delayed) tag bits of every state), or None past `max_states` states."""
        for seed in range(HASH_SEEDS):
            try:
                return self._run(seed)
            except HashCollision:
                continue
        raise HashCollision()

    def _run(self, seed: int) -> tuple[np.ndarray, np.ndarray] | None:
        weights = np.random.default_rng(seed).integers(
            1, 1 << 62, self.key_bytes // 8, dtype=np.int64).astype(np.uint64) | np.uint64(1)
        keys = np.zeros((64, self.key_bytes), dtype=np.uint8)  # by state number, grows
        keys[0, 0] = START if self.assertions else OTHER
        known_hashes = _hashes(keys[:1], weights)  # sorted, with the state of each
        known_states = np.zeros(1, dtype=np.int64)
        state_count, done = 1, 0
        rows: list[np.ndarray] = []
        reports: list[np.ndarray] = []
        block = max(1, BLOCK_CELLS // (self.class_count * self.key_bytes))
        while done < state_count:
            chunk = keys[done:min(state_count, done + block)]
            done += chunk.shape[0]
            targets, chunk_reports = self._step(chunk)
            reports.append(chunk_reports)
            flat = targets.reshape(-1, self.key_bytes)
            distinct, first, inverse = np.unique(_hashes(flat, weights), return_index=True,
                                                 return_inverse=True)
            inverse = inverse.reshape(-1)
            if not np.array_equal(flat, flat[first[inverse]]):
                raise HashCollision()
            where = np.searchsorted(known_hashes, distinct)
            found = where < known_hashes.size
            found[found] = known_hashes[where[found]] == distinct[found]
            numbers = np.full(distinct.size, -1, dtype=np.int64)
            numbers[found] = known_states[where[found]]
            if not np.array_equal(keys[numbers[found]], flat[first[found]]):
                raise HashCollision()
            fresh = np.nonzero(~found)[0]
            if fresh.size:
                if state_count + fresh.size > self.max_states:
                    return None
                in_order = fresh[np.argsort(first[fresh], kind="stable")]
                numbers[in_order] = np.arange(state_count, state_count + fresh.size)
                keys = _grown(keys, state_count + fresh.size)
                keys[state_count:state_count + fresh.size] = flat[first[in_order]]
                state_count += fresh.size
                known_hashes = np.insert(known_hashes, where[fresh], distinct[fresh])
                known_states = np.insert(known_states, where[fresh], numbers[fresh])
            rows.append(numbers[inverse].reshape(-1, self.class_count))
        return np.concatenate(rows).astype(np.int32), np.concatenate(reports)

    def _step(self, chunk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The target keys (states, classes, key bytes) of a block of states, and their
        reports as a (states, 4, tags) bool array."""
        count, tables = chunk.shape[0], self.tables
        prevs = chunk[:, 0].astype(np.int64)
        width, tag_bytes = self.position_bytes, self.tag_bytes
        bits = np.ones((count, self.positions + 1), dtype=bool)  # + a position with no edges
        bits[:, :self.positions] = np.unpackbits(chunk[:, 1:1 + width], axis=1,
                                                 bitorder="little")[:, :self.positions]
        counts = bits.sum(axis=1)
        starts = np.cumsum(counts) - counts
        position = np.nonzero(bits)[1]
        conditions = np.bitwise_or.reduceat(tables.accept[position], starts, axis=0)
        conditions |= tables.empty[None, :]
        tag_rows = (conditions >> (prevs[:, None] * 5)) & ROW
        carried = np.unpackbits(chunk[:, 1 + width:1 + width + 2 * tag_bytes].reshape(
            count, 2, tag_bytes), axis=2, bitorder="little")[:, :, :self.tag_count]
        if self.assertions:
            now = (tag_rows == ROW) & (prevs != START)[:, None]
            at_end = ((tag_rows >> END) & 1).astype(bool) & ~now
        else:
            now, at_end = tag_rows.astype(bool), np.zeros(tag_rows.shape, dtype=bool)
        reports = np.stack([now, carried[:, 0].astype(bool), at_end,
                            carried[:, 1].astype(bool)], axis=1)
        follows = np.stack([np.bitwise_or.reduceat(table[position], starts, axis=0)
                            for table in tables.follow])  # (conditions, states, bytes)
        targets = np.zeros((count, self.class_count, self.key_bytes), dtype=np.uint8)
        for category, classes in self.categories:
            held = ((tables.conditions[None, :] >> (prevs[:, None] * 5 + category)) & 1
                    ).astype(np.uint8)  # (states, conditions)
            candidates = np.bitwise_or.reduce(follows * held.T[:, :, None], axis=0)
            candidates |= np.bitwise_or.reduce(held[:, :, None] * tables.first[None], axis=1)
            block = np.empty((count, classes.size, self.key_bytes), dtype=np.uint8)
            block[:, :, 0] = category
            block[:, :, 1:1 + width] = candidates[:, None, :] & self.class_bits[None, classes]
            tail = np.zeros((count, 2, tag_bytes), dtype=np.uint8)
            if self.assertions:
                following = ((tag_rows >> category) & 1).astype(bool) & ~now
                tail[:, 0] = np.packbits(following, axis=1, bitorder="little")
                if category == NEWLINE:
                    waiting = (((tag_rows >> FINAL_NEWLINE) & 1).astype(bool)
                               & ~((tag_rows >> NEWLINE) & 1).astype(bool) & ~now)
                    tail[:, 1] = np.packbits(waiting, axis=1, bitorder="little")
            block[:, :, 1 + width:] = 0
            block[:, :, 1 + width:1 + width + 2 * tag_bytes] = tail.reshape(count, 1, -1)
            targets[:, classes] = block
        return targets, reports


def _hashes(rows: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """One uint64 per key row: the sum of its 64-bit words, each offset by a random
    weight and mixed by splitmix64's finaliser (a plain linear form collides on keys
    that differ in high bits)."""
    with np.errstate(over="ignore"):
        mixed = rows.view(np.uint64) + weights
        mixed ^= mixed >> np.uint64(30)
        mixed *= np.uint64(0xBF58476D1CE4E5B9)
        mixed ^= mixed >> np.uint64(27)
        mixed *= np.uint64(0x94D049BB133111EB)
        mixed ^= mixed >> np.uint64(31)
        return mixed.sum(axis=1, dtype=np.uint64)


def _grown(keys: np.ndarray, needed: int) -> np.ndarray:
    if needed <= keys.shape[0]:
        return keys
    grown = np.zeros((max(needed, 2 * keys.shape[0]), keys.shape[1]), dtype=np.uint8)
    grown[:keys.shape[0]] = keys
    return grown
