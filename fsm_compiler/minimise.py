"""DFA minimisation and breadth-first state numbering.

Minimisation is Moore's partition refinement, vectorised with numpy: start from
the blocks of states with equal tag sets and split blocks by the blocks their
transitions reach until nothing splits. It yields the same minimal DFA as
Hopcroft's algorithm (the coarsest stable partition); each round is one sort.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import numpy as np


def row_keys(matrix: np.ndarray) -> np.ndarray:
    """One opaque value per row, equal exactly when the rows are equal."""
    matrix = np.ascontiguousarray(matrix)
    return matrix.view(np.dtype((np.void, matrix.dtype.itemsize * matrix.shape[1]))).ravel()


def equivalence_blocks(transitions: np.ndarray, state_tags: Sequence[frozenset[int]]) -> np.ndarray:
    """Block number of every state in the coarsest partition that respects tags and moves."""
    tag_block: dict[frozenset[int], int] = {}
    blocks = np.array([tag_block.setdefault(tags, len(tag_block)) for tags in state_tags],
                      dtype=np.int32)
    count = len(tag_block)
    while True:
        signature = np.column_stack([blocks, blocks[transitions]]).astype(np.int32)
        _, inverse = np.unique(row_keys(signature), return_inverse=True)
        refined = inverse.reshape(-1).astype(np.int32)
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
    """Reachable states in breadth-first order from `start`, visiting classes in order."""
    order, seen = [start], {start}
    queue = deque([start])
    rows = transitions.tolist()
    while queue:
        for target in rows[queue.popleft()]:
            if target not in seen:
                seen.add(target)
                order.append(target)
                queue.append(target)
    return order


def renumber(
    transitions: np.ndarray, state_tags: Sequence[frozenset[int]], order: Sequence[int]
) -> tuple[np.ndarray, list[frozenset[int]]]:
    """Keep the states in `order` and number them 0, 1, ... in that order."""
    new_number = np.full(transitions.shape[0], -1, dtype=np.int32)
    new_number[list(order)] = np.arange(len(order), dtype=np.int32)
    renumbered = new_number[transitions[list(order)]]
    return renumbered.astype(np.int32), [state_tags[state] for state in order]
