"""Pattern sets (docs/fsm-language.md section 4): regexes -> NFA -> DFA -> minimal DFA in BFS order.

Tag `i` is the i-th pattern in declaration order (tags are unique, so this is the
order of first appearance). The `max_states` limit is enforced during subset
construction; when it trips, the patterns responsible are found and named.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from parafuse.grammar.diagnostics import CompileError, Note
from parafuse.grammar.fsm_ast import PatternSet

from ..compiled import CompiledMachine
from ..options import MachineOptions
from .byte_classes import partition_by_columns
from .dfa import StateLimitExceeded, StateReports, SubsetDfa, subset_construction
from .minimise import breadth_first_order, minimise, renumber
from .nfa import build_position_automaton


def check_unique_tags(pattern_set: PatternSet) -> None:
    seen: dict[str, int] = {}
    for index, pattern in enumerate(pattern_set.patterns):
        first = seen.setdefault(pattern.tag.name, index)
        if first != index:
            earlier = pattern_set.patterns[first].tag.location
            raise CompileError(f"tag '{pattern.tag.name}' is used twice in pattern set "
                               f"'{pattern_set.name.name}'", pattern.tag.location,
                               notes=[Note("first used here", earlier)],
                               hint="give each pattern its own tag")
    if not pattern_set.patterns:
        raise CompileError(f"pattern set '{pattern_set.name.name}' has no patterns",
                           pattern_set.name.location, hint="add lines 'TAG /REGEX/'")


def build_subset_dfa(pattern_set: PatternSet, options: MachineOptions) -> SubsetDfa:
    """The unminimised DFA of all patterns; a located error past `max_states`."""
    check_unique_tags(pattern_set)
    try:
        return _subset_dfa(pattern_set, range(len(pattern_set.patterns)), options.max_states)
    except StateLimitExceeded:
        raise _state_limit_error(pattern_set, options.max_states) from None


def _subset_dfa(pattern_set: PatternSet, indices, max_states: int) -> SubsetDfa:
    chosen = [(index, pattern_set.patterns[index].regex) for index in indices]
    return subset_construction(build_position_automaton(chosen), max_states)


def _exceeds(pattern_set: PatternSet, indices, max_states: int) -> bool:
    try:
        _subset_dfa(pattern_set, indices, max_states)
    except StateLimitExceeded:
        return True
    return False


def _state_limit_error(pattern_set: PatternSet, max_states: int) -> CompileError:
    """Name a pattern over the limit on its own, else the shortest prefix that is."""
    hint = "raise 'max_states' in an options block, or split the patterns into several sets"
    patterns = pattern_set.patterns
    for index, pattern in enumerate(patterns):
        if _exceeds(pattern_set, [index], max_states):
            return CompileError(f"pattern '{pattern.tag.name}' alone needs more than "
                                f"{max_states} DFA states (max_states)",
                                pattern.location, hint=hint)
    low, high = 1, len(patterns)  # prefix sizes; the full set exceeds, prefixes grow monotonically
    while low < high:
        middle = (low + high) // 2
        if _exceeds(pattern_set, range(middle), max_states):
            high = middle
        else:
            low = middle + 1
    names = ", ".join(f"'{pattern.tag.name}'" for pattern in patterns[:low])
    return CompileError(f"patterns {names} together need more than {max_states} DFA states "
                        "(max_states)", patterns[low - 1].location, hint=hint)


def minimal_machine(
    pattern_set: PatternSet, dfa: SubsetDfa, options: MachineOptions
) -> CompiledMachine:
    """Minimise `dfa`, number its states breadth-first, and recompute its byte classes."""
    transitions, reports, start = minimise(dfa.transitions, dfa.state_reports, 0)
    transitions, reports = renumber(transitions, reports, breadth_first_order(transitions, start))
    partition, class_table = partition_by_columns(transitions[:, dfa.partition.byte_class])
    return CompiledMachine(
        name=pattern_set.name.name,
        kind="patterns",
        state_names=tuple(str(state) for state in range(len(reports))),
        start=0,
        byte_class=partition.byte_class,
        transitions=class_table.astype(np.int32),
        tag_names=tuple(pattern.tag.name for pattern in pattern_set.patterns),
        options=options,
        location=pattern_set.location,
        **report_fields(reports),
    )


def report_fields(reports: Sequence[StateReports]) -> dict:
    """CompiledMachine's `state_tags`, `delayed_tags` and `end_reports` from StateReports."""
    fields: dict = {"state_tags": tuple(tuple(sorted(r.now)) for r in reports)}
    if any(r.delayed for r in reports):
        fields["delayed_tags"] = tuple(tuple(sorted(r.delayed)) for r in reports)
    if any(r.at_end or r.at_end_delayed for r in reports):
        fields["end_reports"] = tuple(
            tuple(sorted([(tag, 0) for tag in r.at_end] + [(tag, -1) for tag in r.at_end_delayed],
                         key=lambda report: (report[1], report[0])))
            for r in reports)
    return fields


def unminimised_machine(
    pattern_set: PatternSet, dfa: SubsetDfa, options: MachineOptions
) -> CompiledMachine:
    """The subset DFA as a CompiledMachine (for checking minimisation against it)."""
    return CompiledMachine(
        name=pattern_set.name.name, kind="patterns",
        state_names=tuple(str(state) for state in range(dfa.state_count)), start=0,
        byte_class=dfa.partition.byte_class, transitions=dfa.transitions,
        tag_names=tuple(pattern.tag.name for pattern in pattern_set.patterns),
        options=options, location=pattern_set.location, **report_fields(dfa.state_reports),
    )
