"""Subset construction over position bitsets (fsm_compiler/automata/subset_vectorised.py) builds
exactly the DFA of the state-by-state definition: same states, numbers, reports and
byte classes, also when it stops at the state limit, on random pattern sets (assertions
and inline flags included), token-style anchored sets and sets without assertions, with
blocks of one state and of many, follow sets from packed tables and from scattered
edges."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings

from parafuse.fsm_compiler.automata import subset_vectorised
from parafuse.fsm_compiler.automata.dfa import (
    StateLimitExceeded,
    subset_construction,
    subset_construction_by_state,
    subset_construction_vectorised,
)
from parafuse.fsm_compiler.automata.nfa import build_position_automaton
from parafuse.grammar.diagnostics import CompileError, SourceFile
from parafuse.grammar.fsm_parser import parse_fsm

from .fsm_regex_strategies import assertion_free_regexes, flags, pattern_set_source, pattern_sets


def _automaton(patterns):
    try:
        pattern_set = parse_fsm(SourceFile("p.fsm", pattern_set_source(patterns))).machines[0]
    except CompileError:
        return None
    return build_position_automaton([(index, pattern.regex)
                                     for index, pattern in enumerate(pattern_set.patterns)])


def _outcome(construction, automaton, limit):
    try:
        dfa = construction(automaton, limit)
    except StateLimitExceeded:
        return None
    return (dfa.transitions.tolist(), dfa.state_reports, dfa.partition.byte_class.tolist())


def _check_same(automaton, limit) -> None:
    expected = _outcome(subset_construction_by_state, automaton, limit)
    assert _outcome(subset_construction_vectorised, automaton, limit) == expected


@pytest.fixture(params=[{}, {"BLOCK_CELLS": 1}, {"DENSE_FOLLOW_BYTES": 0}],
                ids=["defaults", "blocks-of-one-state", "edges-scattered"])
def block_cells(request, monkeypatch):
    for name, value in request.param.items():
        monkeypatch.setattr(subset_vectorised, name, value)


@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(pattern_sets)
def test_same_dfa_as_state_by_state(block_cells, patterns) -> None:
    automaton = _automaton(patterns)
    assume(automaton is not None)
    _check_same(automaton, 400)
    _check_same(automaton, 7)  # most sets pass 7 states: both must stop


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(pattern_sets)
def test_same_dfa_without_word_assertions(patterns) -> None:
    automaton = _automaton([(regex.replace("\\b", "").replace("\\B", ""), flag)
                            for regex, flag in patterns])
    assume(automaton is not None)
    _check_same(automaton, 400)


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(assertion_free_regexes, flags)
def test_same_dfa_for_assertion_free_regexes(regex, flag) -> None:
    automaton = _automaton([(regex, flag), (regex + "x", flag)])
    assume(automaton is not None)
    assert not automaton.has_assertions
    _check_same(automaton, 400)


def test_keys_differing_in_high_bits_stay_apart() -> None:
    """Position sets that differ in the top bits of 64-bit words (where a plain linear
    hash of the words collides) are distinct states."""
    _check_same(_automaton([("[ab]{40}c|[ab]{20}d", "")]), 1 << 16)


def test_hash_collisions_fall_back_to_the_definition(monkeypatch) -> None:
    """Every key hashing alike: each seed fails, the state-by-state loop builds the DFA."""
    monkeypatch.setattr(subset_vectorised, "_hashes",
                        lambda rows, weights: np.zeros(rows.shape[0], dtype=np.uint64))
    _check_same(_automaton([(r"\bab+c|[^a]b\B", "i")]), 400)


def _literal(length: int) -> str:
    state, letters = 7, []
    for _ in range(length):
        state = (state * 1103515245 + 12345) % (1 << 31)
        letters.append("abcdefghij0123456789"[state % 20])
    return "".join(letters)


def test_narrow_levels_are_built_state_by_state(monkeypatch) -> None:
    """A long literal (one state a breadth-first level) is built by the definition, and
    stops at the state limit as it does; numpy's rounds are not run."""
    automaton = _automaton([(_literal(600), "i")])
    narrow = subset_construction_by_state(automaton, 1 << 16, narrow_only=True)
    assert narrow is not None and narrow.transitions.shape[0] == 601
    monkeypatch.setattr(subset_vectorised.VectorisedSubsets, "run", lambda self: pytest.fail())
    assert _outcome(subset_construction, automaton, 1 << 16) == \
        _outcome(subset_construction_by_state, automaton, 1 << 16)
    assert _outcome(subset_construction, automaton, 300) is None


def test_wide_levels_go_to_numpy() -> None:
    """Keywords spread over many states a level: the state-by-state attempt gives up after
    its probe, and numpy's rounds build the same DFA."""
    words = "|".join(_literal(8 + i % 5)[i % 3:] + str(i) for i in range(40))
    automaton = _automaton([(words, "")])
    assert subset_construction_by_state(automaton, 1 << 16, narrow_only=True) is None
    assert _outcome(subset_construction, automaton, 1 << 16) == \
        _outcome(subset_construction_by_state, automaton, 1 << 16)
