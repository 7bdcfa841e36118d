"""A pattern set as several engines (docs/fsm-language.md section 4, docs/fsm.md).

    compile_pattern_set(set, options) -> CompiledMachine   when one DFA holds every pattern
                                      -> EngineSet         otherwise

How a set is split (greedy packing, in file order):
1. each pattern's DFA by subset construction, stopping past `max_states` states;
   a pattern that does not fit alone goes to the bit-parallel NFA engine
   (nfa_engine.py), one NFA engine per pattern;
2. the patterns that fit are packed in file order: the current group's minimal DFA
   times the next pattern's (dfa_product.py); while the minimal product holds at
   most `max_states` states the pattern joins the group, else the group becomes a
   DFA engine and the pattern starts the next group.
A DFA engine is a CompiledMachine over all the set's tags (its states report only
its own patterns' tags), so its counts and matches need no renumbering.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from parafuse.grammar.diagnostics import Location
from parafuse.grammar.fsm_ast import PatternSet

from .compiled import CompiledMachine
from .dfa import StateLimitExceeded, subset_construction
from .dfa_product import ProductTooLarge, TaggedDfa, minimal, product, tag_indices
from .nfa import build_position_automaton
from .nfa_engine import NfaEngine, nfa_engine
from .options import MachineOptions
from .pattern_sets import check_unique_tags

PRODUCT_SLACK = 2  # a product may reach this many times max_states before minimising


@dataclass(frozen=True)
class DfaEngine:
    patterns: tuple[int, ...]  # tag indices of its patterns
    machine: CompiledMachine


Engine = DfaEngine | NfaEngine


@dataclass(frozen=True, eq=False)
class EngineSet:
    """A pattern set run as several engines over the same input; matches are merged by
    offset, then by tag order."""

    name: str
    tag_names: tuple[str, ...]
    engines: tuple[Engine, ...]
    options: MachineOptions
    location: Location
    kind: str = "patterns"

    def final_state_label(self, states: list[int | None]) -> list[int | None]:
        """Results give one final state per engine, in engine order (None: no states)."""
        return list(states)


def engine_kind(engine: Engine) -> str:
    return "dfa" if isinstance(engine, DfaEngine) else "nfa"


def pattern_dfa(pattern_set: PatternSet, index: int, max_states: int) -> TaggedDfa | None:
    """The minimal DFA of one pattern, or None when its subset DFA passes `max_states`."""
    automaton = build_position_automaton([(index, pattern_set.patterns[index].regex)])
    try:
        dfa = subset_construction(automaton, max_states)
    except StateLimitExceeded:
        return None
    tags = tuple(sum(1 << tag for tag in state_tags) for state_tags in dfa.state_tags)
    return minimal(TaggedDfa(dfa.partition.byte_class, dfa.transitions, tags))


def _machine(pattern_set: PatternSet, dfa: TaggedDfa, options: MachineOptions,
             name: str) -> CompiledMachine:
    return CompiledMachine(
        name=name, kind="patterns",
        state_names=tuple(str(state) for state in range(dfa.state_count)), start=0,
        byte_class=dfa.byte_class, transitions=dfa.transitions.astype(np.int32),
        tag_names=tuple(pattern.tag.name for pattern in pattern_set.patterns),
        state_tags=tuple(tag_indices(mask) for mask in dfa.tags),
        options=options, location=pattern_set.location)


def _joined(group: TaggedDfa, dfa: TaggedDfa, max_states: int) -> TaggedDfa | None:
    """The product of a group and a pattern if it fits in `max_states` (minimised only
    when the raw product does not fit: minimising every step costs more than it saves)."""
    try:
        joined = product(group, dfa, PRODUCT_SLACK * max_states)
    except ProductTooLarge:
        return None
    if joined.state_count > max_states:
        joined = minimal(joined)
    return joined if joined.state_count <= max_states else None


def pack_groups(pattern_set: PatternSet, max_states: int
                ) -> tuple[list[tuple[list[int], TaggedDfa]], list[int]]:
    """(DFA groups: (pattern indices, minimal DFA), patterns that fit no DFA alone)."""
    groups: list[tuple[list[int], TaggedDfa]] = []
    too_big: list[int] = []
    current: tuple[list[int], TaggedDfa] | None = None
    for index in range(len(pattern_set.patterns)):
        dfa = pattern_dfa(pattern_set, index, max_states)
        if dfa is None:
            too_big.append(index)
            continue
        if current is not None:
            joined = _joined(current[1], dfa, max_states)
            if joined is None and len(current[0]) > 1:  # retry from the minimal group
                current = (current[0], minimal(current[1]))
                joined = _joined(current[1], dfa, max_states)
            if joined is not None:
                current = (current[0] + [index], joined)
                continue
            groups.append((current[0], minimal(current[1])))
        current = ([index], dfa)
    if current is not None:
        groups.append((current[0], minimal(current[1])))
    return groups, too_big


def compile_pattern_set(pattern_set: PatternSet, options: MachineOptions
                        ) -> CompiledMachine | EngineSet:
    """One DFA when every pattern fits in one, else the engines described above."""
    check_unique_tags(pattern_set)
    name = pattern_set.name.name
    groups, too_big = pack_groups(pattern_set, options.max_states)
    if len(groups) == 1 and not too_big:
        return _machine(pattern_set, groups[0][1], options, name)
    engines: list[Engine] = [
        DfaEngine(tuple(indices), _machine(pattern_set, dfa, options, f"{name}.{number}"))
        for number, (indices, dfa) in enumerate(groups)]
    for index in too_big:
        automaton = build_position_automaton([(index, pattern_set.patterns[index].regex)])
        engines.append(nfa_engine(automaton, (index,)))
    return EngineSet(name, tuple(pattern.tag.name for pattern in pattern_set.patterns),
                     tuple(engines), options, pattern_set.location)
