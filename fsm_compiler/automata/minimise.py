"""DFA minimisation and breadth-first state numbering.

Minimisation is Moore's partition refinement, vectorised with numpy: start from
the blocks of states with equal tag sets and split blocks by the blocks their
transitions reach until nothing splits. It yields the same minimal DFA as
Hopcroft's algorithm (the coarsest stable partition); each round is one sort.

Moore needs as many rounds as the longest chain of states told apart one at a time (a
literal of n bytes: n rounds, so quadratic time). The first partition therefore also
splits states by their distance to the nearest state of each tag set other than the most
common one (a breadth-first search over the reversed transitions per tag set, for up to
MOST_DISTANCE_TAG_SETS of them, and one to any of them): equivalent states see the same
tags along every input, so they share those distances, and the coarsest stable
partition is the same; a chain is told apart at once, also where a short pattern beside
it reports within a few bytes of every state.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def row_keys(matrix: np.ndarray) -> np.ndarray:
    """One opaque value per row, equal exactly when the rows are equal."""
    matrix = np.ascontiguousarray(matrix)
    return matrix.view(np.dtype((np.void, matrix.dtype.itemsize * matrix.shape[1]))).ravel()


def _signature_blocks(signature: np.ndarray) -> np.ndarray:
    """Number the distinct rows of `signature` (exact): rows are hashed to one uint64 by a
    random linear form, numbered by hash, and checked against their block's first row;
    a collision (never seen) falls back to sorting the rows themselves."""
    weights = _HASH_WEIGHTS[:signature.shape[1]]
    with np.errstate(over="ignore"):
        hashes = (signature.astype(np.uint64) * weights).sum(axis=1, dtype=np.uint64)
    _, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    if np.array_equal(signature, signature[first[inverse]]):
        return inverse.astype(np.int32)
    _, inverse = np.unique(row_keys(signature), return_inverse=True)
    return inverse.reshape(-1).astype(np.int32)


_HASH_WEIGHTS = np.random.default_rng(0x5EED).integers(
    1, np.iinfo(np.int64).max, 1024, dtype=np.int64).astype(np.uint64) | np.uint64(1)


# Breadth-first levels of at most this many states are stepped in Python: a numpy round
# costs about 20 us whatever its size, and a long literal's chain is a level a state
# (a 5,000-byte literal: 3 numberings and 2 distance searches, 0.4 s in numpy's rounds).
NARROW_LEVEL = 8

# The tag sets (other than the most common) that the first partition measures distances
# to, each its own breadth-first search; past them, the distance to any of the rest.
MOST_DISTANCE_TAG_SETS = 16


class ReversedMoves:
    """The predecessors of every state (compressed rows), for breadth-first searches
    towards a set of states, one numpy step per level."""

    def __init__(self, transitions: np.ndarray) -> None:
        n = transitions.shape[0]
        targets = transitions.ravel()
        order = np.argsort(targets, kind="stable")
        self.predecessors = np.repeat(np.arange(n), transitions.shape[1])[order]
        self.starts = np.searchsorted(targets[order], np.arange(n + 1))
        self.n = n

    def distances(self, targets: np.ndarray) -> np.ndarray:
        """Per state, the fewest bytes to a state of the mask `targets` (0 for those; -1
        where none is reachable). A level of at most NARROW_LEVEL states is stepped in
        Python (NARROW_LEVEL says why)."""
        distance = np.where(targets, 0, -1).astype(np.int64)
        frontier, level = np.flatnonzero(targets), 0
        while frontier.size:
            level += 1
            if frontier.size <= NARROW_LEVEL:
                reached = {p for state in frontier.tolist() for p in
                           self.predecessors[self.starts[state]:self.starts[state + 1]].tolist()}
                fresh = sorted(p for p in reached if distance[p] < 0)
                frontier = np.array(fresh, dtype=np.int64)
                distance[frontier] = level
                continue
            first, counts = self.starts[frontier], np.diff(self.starts)[frontier]
            offsets = np.repeat(first - np.cumsum(counts) + counts, counts)
            reached = self.predecessors[offsets + np.arange(int(counts.sum()))]
            frontier = np.unique(reached[distance[reached] < 0])
            distance[frontier] = level
        return distance


def distance_columns(transitions: np.ndarray, tag_blocks: np.ndarray) -> list[np.ndarray]:
    """The distances the first partition splits by: to any tag block other than the most
    common one, and to each of the first MOST_DISTANCE_TAG_SETS of those blocks."""
    moves = ReversedMoves(transitions)
    common = np.bincount(tag_blocks).argmax()
    others = [int(b) for b in np.unique(tag_blocks) if b != common]
    columns = [moves.distances(tag_blocks != common)]
    if len(others) > 1:
        columns += [moves.distances(tag_blocks == b) for b in others[:MOST_DISTANCE_TAG_SETS]]
    return columns


def equivalence_blocks(transitions: np.ndarray, state_tags: Sequence) -> np.ndarray:
    """Block number of every state in the coarsest partition that respects tags and moves.
    Each round numbers the signature rows by hashing them (`_signature_blocks`)."""
    tag_block: dict = {}
    tag_blocks = np.array([tag_block.setdefault(tags, len(tag_block)) for tags in state_tags],
                          dtype=np.int32)
    if not tag_blocks.size:
        return tag_blocks
    blocks = _signature_blocks(np.column_stack(
        [tag_blocks, *distance_columns(transitions, tag_blocks)]))
    count = int(blocks.max()) + 1
    while True:
        signature = np.column_stack([blocks, blocks[transitions]])
        if signature.shape[1] > len(_HASH_WEIGHTS):
            _, inverse = np.unique(row_keys(signature.astype(np.int32)), return_inverse=True)
            refined = inverse.reshape(-1).astype(np.int32)
        else:
            refined = _signature_blocks(signature)
        refined_count = int(refined.max()) + 1 if refined.size else 0
        if refined_count == count:
            return blocks
        blocks, count = refined, refined_count


def minimise(
    transitions: np.ndarray, state_tags: Sequence[frozenset[int]], start: int
) -> tuple[np.ndarray, list[frozenset[int]], int]:
    """The quotient DFA: (transitions, tags per state, start) with equivalent states merged."""
    blocks = equivalence_blocks(transitions, state_tags)
    count = int(blocks.max()) + 1
    representative = np.zeros(count, dtype=np.int64)
    representative[blocks[::-1]] = np.arange(len(blocks))[::-1]  # first state of each block
    quotient = blocks[transitions[representative]]
    tags = [state_tags[int(state)] for state in representative]
    return quotient.astype(np.int32), tags, int(blocks[start])


def breadth_first_order(transitions: np.ndarray, start: int) -> list[int]:
    """Reachable states in breadth-first order from `start`, visiting classes in order.

    One numpy pass per level: the level's targets, row by row, are the visiting order,
    so the first occurrences of unseen states, in place order, are the next level (a
    level of at most NARROW_LEVEL states is stepped in Python, in the same order)."""
    seen = np.zeros(transitions.shape[0], dtype=bool)
    seen[start] = True
    levels = [np.array([start], dtype=np.int64)]
    frontier = levels[0]
    while frontier.size:
        if frontier.size <= NARROW_LEVEL:
            following = list(dict.fromkeys(
                target for target in transitions[frontier].reshape(-1).tolist()
                if not seen[target]))
            frontier = np.array(following, dtype=np.int64)
            seen[frontier] = True
            levels.append(frontier)
            continue
        targets = transitions[frontier].reshape(-1)
        targets = targets[~seen[targets]]
        _, first = np.unique(targets, return_index=True)
        frontier = targets[np.sort(first)].astype(np.int64)
        seen[frontier] = True
        levels.append(frontier)
    return np.concatenate(levels).tolist()


def renumber(
    transitions: np.ndarray, state_tags: Sequence[frozenset[int]], order: Sequence[int]
) -> tuple[np.ndarray, list[frozenset[int]]]:
    """Keep the states in `order` and number them 0, 1, ... in that order."""
    new_number = np.full(transitions.shape[0], -1, dtype=np.int32)
    new_number[list(order)] = np.arange(len(order), dtype=np.int32)
    renumbered = new_number[transitions[list(order)]]
    return renumbered.astype(np.int32), [state_tags[state] for state in order]
