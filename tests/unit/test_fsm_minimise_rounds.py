"""Minimisation's first partition (fsm_compiler/automata/minimise.py): states are split by
their distance to each other tag set as well as by their tags, so a chain of states told
apart one at a time (a long literal, also beside a short pattern that reports within a
byte of every state) needs one round of refinement, not one per state, and the partition
is still the coarsest stable one."""

from __future__ import annotations

import numpy as np
import pytest

from parafuse.fsm_compiler.automata import minimise as minimise_module
from parafuse.fsm_compiler.automata.minimise import ReversedMoves, equivalence_blocks


def chain(n: int) -> tuple[np.ndarray, list[frozenset[int]]]:
    """A literal of n bytes over two classes: class 0 advances, class 1 goes back to 0;
    the last state reports."""
    transitions = np.zeros((n + 1, 2), dtype=np.int32)
    transitions[:, 0] = np.minimum(np.arange(n + 1) + 1, n)
    return transitions, [frozenset()] * n + [frozenset({0})]


def test_a_chain_is_told_apart_in_one_round(monkeypatch) -> None:
    rounds = []
    signature_blocks = minimise_module._signature_blocks
    monkeypatch.setattr(minimise_module, "_signature_blocks",
                        lambda rows: rounds.append(1) or signature_blocks(rows))
    transitions, tags = chain(3000)
    blocks = equivalence_blocks(transitions, tags)
    assert len(set(blocks.tolist())) == 3001  # every state of a literal is its own
    assert len(rounds) <= 2, len(rounds)  # the first partition, then one stable round


def counting_rounds(monkeypatch) -> list[int]:
    rounds: list[int] = []
    signature_blocks = minimise_module._signature_blocks
    monkeypatch.setattr(minimise_module, "_signature_blocks",
                        lambda rows: rounds.append(1) or signature_blocks(rows))
    return rounds


def test_a_chain_beside_a_short_pattern_is_told_apart_in_one_round(monkeypatch) -> None:
    """Class 1 leads from every state to one that reports another tag (a one-byte pattern
    beside the literal): every state is a byte from another tag set, so only the
    distance to the literal's own report tells the chain apart."""
    rounds = counting_rounds(monkeypatch)
    transitions, tags = chain(3000)
    transitions = np.vstack([transitions, [[1, 0]]]).astype(np.int32)
    transitions[:, 1] = 3001
    tags = [*tags, frozenset({1})]
    blocks = equivalence_blocks(transitions, tags)
    assert len(set(blocks.tolist())) == 3002
    assert len(rounds) <= 2, len(rounds)


@pytest.mark.parametrize("seed", range(10))
def test_distances_equal_a_plain_breadth_first_search(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(1, 60)), int(rng.integers(1, 4))
    transitions = rng.integers(0, n, (n, k)).astype(np.int32)
    targets = rng.random(n) < 0.1
    expected = [-1] * n
    for state in range(n):
        level, seen, frontier = 0, {state}, {state}
        while frontier and not any(targets[s] for s in frontier):
            level += 1
            frontier = {int(t) for s in frontier for t in transitions[s]} - seen
            seen |= frontier
        expected[state] = level if frontier else -1
    assert ReversedMoves(transitions).distances(targets).tolist() == expected


def test_distances_count_bytes_to_the_reporting_state() -> None:
    transitions, tags = chain(5)
    reporting = np.array([False] * 5 + [True])
    assert ReversedMoves(transitions).distances(reporting).tolist() == [5, 4, 3, 2, 1, 0]
    unreachable = np.array([[1, 1], [1, 1], [2, 2]], dtype=np.int32)
    assert ReversedMoves(unreachable).distances(np.array([False, False, True])).tolist() == \
        [-1, -1, 0]


@pytest.mark.parametrize("seed", range(20))
def test_random_dfas_get_the_coarsest_stable_partition(seed: int) -> None:
    """Against table filling: two states share a block exactly when no input tells them
    apart by their tags."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(2, 40)), int(rng.integers(1, 4))
    transitions = rng.integers(0, n, (n, k)).astype(np.int32)
    tags = [frozenset({int(t)}) if t < 2 else frozenset() for t in rng.integers(0, 6, n)]
    blocks = equivalence_blocks(transitions, tags)
    marked = np.array([[a != b for b in tags] for a in tags])
    while True:
        grown = marked.copy()
        for column in transitions.T:
            grown |= marked[column[:, None], column[None, :]]
        if (grown == marked).all():
            break
        marked = grown
    assert ((blocks[:, None] == blocks[None, :]) == ~marked).all()


@pytest.mark.parametrize("narrow", [0, 8, 1 << 30])
def test_narrow_levels_step_as_the_numpy_rounds(narrow: int, monkeypatch) -> None:
    """Levels of at most NARROW_LEVEL states are stepped in Python: breadth-first numbering
    and distances come out as a plain breadth-first search gives them whichever way each
    level goes (all in numpy's rounds, the narrow ones in Python, all in Python), on
    random machines and chains."""
    monkeypatch.setattr(minimise_module, "NARROW_LEVEL", narrow)
    rng = np.random.default_rng(73)
    for trial in range(40):
        n, k = int(rng.integers(1, 60)), int(rng.integers(1, 5))
        transitions = rng.integers(0, n, (n, k)).astype(np.int32)
        if trial % 2:  # a chain with random steps back to the start
            transitions = np.where(rng.random((n, k)) < 0.7,
                                   np.minimum(np.arange(n)[:, None] + 1, n - 1), 0).astype(np.int32)
        start = int(rng.integers(0, n))
        order, seen, frontier = [start], {start}, [start]
        while frontier:
            following = []
            for state in frontier:
                for target in transitions[state].tolist():
                    if target not in seen:
                        seen.add(target)
                        following.append(target)
            order += following
            frontier = following
        assert minimise_module.breadth_first_order(transitions, start) == order
        targets = rng.random(n) < 0.2
        plain = ReversedMoves(transitions)
        with monkeypatch.context() as numpy_only:
            numpy_only.setattr(minimise_module, "NARROW_LEVEL", 0)
            expected = plain.distances(targets)
        assert np.array_equal(plain.distances(targets), expected)
