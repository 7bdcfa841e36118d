"""A TaggedDfa (fsm_compiler/automata/dfa_product.py) as the CompiledMachine an engine runs: the
DFA engines of a set (engines.py) and the literal DFA of a prefilter engine
(prefilter_engine.py) are both one."""

from __future__ import annotations

import numpy as np

from parafuse.grammar.fsm_ast import PatternSet

from ..automata.dfa import StateLimitExceeded, report_mask, reports_of_mask, subset_construction
from ..automata.dfa_product import TaggedDfa, minimal
from ..automata.nfa import PositionAutomaton
from ..automata.pattern_sets import report_fields
from ..compiled import CompiledMachine
from ..options import MachineOptions


def minimal_tagged_dfa(automaton: PositionAutomaton, max_states: int) -> TaggedDfa | None:
    """The minimal DFA of `automaton`, or None when its subset DFA passes `max_states`.
    A state's reports are one mask (dfa.report_mask): a product's are the OR of its parts'."""
    try:
        dfa = subset_construction(automaton, max_states)
    except StateLimitExceeded:
        return None
    reports = tuple(report_mask(r) for r in dfa.state_reports)
    return minimal(TaggedDfa(dfa.partition.byte_class, dfa.transitions, reports))


def mask_reports(masks: tuple[int, ...]) -> list:
    """StateReports of every state, decoded once per distinct mask (states share few)."""
    decoded = {mask: reports_of_mask(mask) for mask in set(masks)}
    return [decoded[mask] for mask in masks]


def dfa_machine(pattern_set: PatternSet, dfa: TaggedDfa, options: MachineOptions,
                name: str) -> CompiledMachine:
    """The machine of `dfa` over all the set's tags (its states report only its own)."""
    return CompiledMachine(
        name=name, kind="patterns",
        state_names=tuple(str(state) for state in range(dfa.state_count)), start=0,
        byte_class=dfa.byte_class, transitions=dfa.transitions.astype(np.int32),
        tag_names=tuple(pattern.tag.name for pattern in pattern_set.patterns),
        options=options, location=pattern_set.location,
        **report_fields(mask_reports(dfa.tags)))
