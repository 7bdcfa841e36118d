"""Minimisation: minimal and unminimised DFAs agree on random inputs, the minimal DFA
has no two equivalent states (checked by table filling, independently of Moore's
refinement), and its states are numbered breadth-first; so is the one DFA that
`boostfsm compile` makes of a pattern set (packed pattern by pattern, engines.py)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, assume, given, settings

from parafuse.fsm_compiler.automata.dfa import StateLimitExceeded, report_mask, reports_of_mask
from parafuse.fsm_compiler.automata.minimise import breadth_first_order
from parafuse.fsm_compiler.automata.pattern_sets import (
    build_subset_dfa,
    minimal_machine,
    unminimised_machine,
)
from parafuse.fsm_compiler.options import MachineOptions
from parafuse.fsm_compiler.reference_executor import run_reference
from parafuse.grammar.diagnostics import CompileError, SourceFile
from parafuse.grammar.fsm_parser import parse_fsm

from .fsm_regex_strategies import compile_patterns, haystacks, pattern_set_source, pattern_sets

OPTIONS = MachineOptions(max_states=1500)


def _both_machines(patterns):
    try:
        pattern_set = parse_fsm(SourceFile("p.fsm", pattern_set_source(patterns))).machines[0]
        dfa = build_subset_dfa(pattern_set, OPTIONS)
    except (CompileError, StateLimitExceeded):
        return None
    return (minimal_machine(pattern_set, dfa, OPTIONS),
            unminimised_machine(pattern_set, dfa, OPTIONS))


def _distinguishable_pairs(transitions: np.ndarray, signatures) -> np.ndarray:
    """Table filling: marked[p, q] when some input tells p and q apart (by what they report)."""
    tags = list(signatures)
    marked = np.array([[a != b for b in tags] for a in tags])
    while True:
        grown = marked.copy()
        for column in transitions.T:
            grown |= marked[column[:, None], column[None, :]]
        if (grown == marked).all():
            return marked
        marked = grown


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern_sets, haystacks)
def test_minimised_and_unminimised_dfas_agree(patterns, data) -> None:
    machines = _both_machines(patterns)
    assume(machines is not None)
    minimal, raw = machines
    assert minimal.state_count <= raw.state_count
    expected = run_reference(raw, data, True)
    actual = run_reference(minimal, data, True)
    assert (actual.matches, actual.counts) == (expected.matches, expected.counts)


def assert_minimal_and_numbered(minimal) -> None:
    signatures = [(minimal.reports(state), minimal.end_of(state))
                  for state in range(minimal.state_count)]
    marked = _distinguishable_pairs(minimal.transitions, signatures)
    assert marked[~np.eye(minimal.state_count, dtype=bool)].all()
    assert breadth_first_order(minimal.transitions, 0) == list(range(minimal.state_count))
    first_bytes = [int(np.flatnonzero(minimal.byte_class == c)[0])
                   for c in range(minimal.class_count)]
    assert first_bytes == sorted(first_bytes)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern_sets)
def test_minimal_dfa_has_no_equivalent_states_and_bfs_numbering(patterns) -> None:
    machines = _both_machines(patterns)
    assume(machines is not None and machines[0].state_count <= 300)
    assert_minimal_and_numbered(machines[0])


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(pattern_sets)
def test_a_set_compiled_to_one_dfa_is_minimal(patterns) -> None:
    """A one-pattern set keeps its pattern's DFA (minimised once, as it was built); a set
    of several is the product of its patterns' DFAs, minimised."""
    try:
        machine = compile_patterns(patterns)
    except CompileError:
        assume(False)
    assume(machine is not None and machine.state_count <= 300)
    assert_minimal_and_numbered(machine)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern_sets)
def test_report_masks_round_trip(patterns) -> None:
    """StateReports <-> one integer per state (what products of DFAs combine by OR)."""
    try:
        pattern_set = parse_fsm(SourceFile("p.fsm", pattern_set_source(patterns))).machines[0]
        dfa = build_subset_dfa(pattern_set, OPTIONS)
    except (CompileError, StateLimitExceeded):
        assume(False)
    for reports in dfa.state_reports:
        assert reports_of_mask(report_mask(reports)) == reports
