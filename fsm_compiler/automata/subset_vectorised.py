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

The state-by-state construction steps one state and one class at a time in Python
(~50 us a state, which would be most of `boostfsm check` on big rule sets).
"""

from __future__ import annotations

import numpy as np

from .assertions import ALWAYS, END, FINAL_NEWLINE, NEWLINE, OTHER, ROW, START
from .assertions import WORD as WORD_CATEGORY
from .byte_classes import BytePartition
from .nfa import PositionAutomaton

BLOCK_CELLS = 1 << 22  # (states x classes x key bytes) expanded at once, at most
DENSE_FOLLOW_BYTES = 1 << 24  # packed follow tables past this: edges scattered per block
HASH_SEEDS = 3  # a hash collision between two keys (never seen) retries with a new seed
_NEXT_CATEGORIES = (WORD_CATEGORY, NEWLINE, OTHER)


class HashCollision(Exception):
    """Two distinct keys hashed alike: the construction is retried with another seed."""


def _packed_bits(rows: np.ndarray, columns: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """A (rows, bytes) array with bit `column` of row `row` set for each pair, packed
    little-endian (bit c in byte c // 8, bit c % 8)."""
    packed = np.zeros((shape[0], (shape[1] + 7) // 8), dtype=np.uint8)
    np.bitwise_or.at(packed, (rows, columns >> 3), (1 << (columns & 7)).astype(np.uint8))
    return packed


def _expand(start: np.ndarray, rows: np.ndarray, items: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """For (row, item) pairs and CSR offsets `start` (item i owns entries start[i] to
    start[i + 1]): (row of each owned entry, entry index)."""
    lengths = start[items + 1] - start[items]
    edge_rows = np.repeat(rows, lengths)
    offsets = np.repeat(start[items] - np.cumsum(lengths) + lengths, lengths)
    return edge_rows, offsets + np.arange(int(lengths.sum()), dtype=np.int64)


class _Tables:
    """The automaton as arrays. Edges in CSR form by source position (target, index of
    the edge's condition); for small automata also packed per position (one table per
    distinct condition), so that a state's follow set is one OR-reduction. First
    positions packed per condition; per position and tag the accepting condition."""

    def __init__(self, automaton: PositionAutomaton, tag_index: dict[int, int]) -> None:
        positions = self.positions = automaton.position_count
        conditions = sorted({c for edges in automaton.follow for c in edges.values()}
                            | set(automaton.first.values()) | {ALWAYS})
        self.conditions = np.array(conditions, dtype=np.int64)
        number = {condition: index for index, condition in enumerate(conditions)}
        counts = [len(edges) for edges in automaton.follow] + [0]  # + the no-edge position
        self.follow_start = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=self.follow_start[1:])
        total = int(self.follow_start[-1])
        self.follow_target = np.fromiter((q for edges in automaton.follow for q in edges),
                                         np.int64, total)
        self.follow_condition = np.fromiter(
            (number[c] for edges in automaton.follow for c in edges.values()), np.int64, total)
        width = (positions + 7) // 8
        self.follow = None  # (conditions, positions + 1, bytes) when small enough
        if len(conditions) * (positions + 1) * width <= DENSE_FOLLOW_BYTES:
            sources = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
            self.follow = _packed_bits(
                self.follow_condition * (positions + 1) + sources, self.follow_target,
                (len(conditions) * (positions + 1), positions)
            ).reshape(len(conditions), positions + 1, width)
        first = np.fromiter(automaton.first, np.int64, len(automaton.first))
        self.first = _packed_bits(
            np.fromiter((number[c] for c in automaton.first.values()), np.int64, first.size),
            first, (len(conditions), positions))
        accepts = sorted((q, tag_index[t], c) for q, tags in automaton.accepting.items()
                         for t, c in tags.items())
        accept_counts = np.zeros(positions + 2, dtype=np.int64)
        np.add.at(accept_counts, np.array([q + 1 for q, _, _ in accepts], dtype=np.int64), 1)
        self.accept_start = np.cumsum(accept_counts)  # CSR by position, as the edges
        self.accept_tag = np.array([t for _, t, _ in accepts], dtype=np.int64)
        self.accept_condition = np.array([c for _, _, c in accepts], dtype=np.int64)
        self.tag_count = len(tag_index)
        self.empty = np.zeros(len(tag_index), dtype=np.int64)
        for t, c in automaton.empty_accepts.items():
            self.empty[tag_index[t]] |= c

    def accepting(self, rows: np.ndarray, position: np.ndarray, count: int) -> np.ndarray:
        """(states, tags): the OR of the accepting conditions of each state's positions
        and of the empty-match conditions; (rows, position) pairs give the states."""
        conditions = np.zeros((count, self.tag_count), dtype=np.int64)
        conditions |= self.empty[None, :]
        accept_rows, entry = _expand(self.accept_start, rows, position)
        np.bitwise_or.at(conditions, (accept_rows, self.accept_tag[entry]),
                         self.accept_condition[entry])
        return conditions

    def follows(self, rows: np.ndarray, position: np.ndarray, starts: np.ndarray
                ) -> np.ndarray:
        """Per condition, per state (given as (rows, position) pairs, sorted by row, `starts`
        where each state's begin, each ending with the no-edge position): the packed
        union of its follow sets."""
        if self.follow is not None:
            return np.stack([np.bitwise_or.reduceat(table[position], starts, axis=0)
                             for table in self.follow])
        count = starts.size
        edge_rows, edge = _expand(self.follow_start, rows, position)
        return np.stack([
            _packed_bits(edge_rows[selected], self.follow_target[edge[selected]],
                         (count, self.positions))
            for selected in (self.follow_condition[edge] == index
                             for index in range(self.conditions.size))])


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
        rows, position, starts = _members(chunk[:, 1:1 + width], self.positions)
        conditions = tables.accepting(rows, position, count)
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
        follows = tables.follows(rows, position, starts)  # (conditions, states, bytes)
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


def _members(packed: np.ndarray, no_edges: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (state, position) pairs of packed position sets, by state then position, each
    state's followed by the position `no_edges`; and where each state's pairs start.
    Only the non-zero bytes are unpacked (position sets are sparse)."""
    count = packed.shape[0]
    byte_rows, byte_index = np.nonzero(packed)
    bits = np.unpackbits(packed[byte_rows, byte_index][:, None], axis=1, bitorder="little")
    pair, bit = np.nonzero(bits)
    rows = np.concatenate([byte_rows[pair], np.arange(count, dtype=np.int64)])
    position = np.concatenate([byte_index[pair] * 8 + bit,
                               np.full(count, no_edges, dtype=np.int64)])
    order = np.argsort(rows, kind="stable")
    counts = np.bincount(rows, minlength=count)
    return rows[order], position[order], np.cumsum(counts) - counts


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
