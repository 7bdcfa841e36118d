"""A pattern set as several engines (docs/fsm-language.md section 4, docs/fsm.md).

    compile_pattern_set(set, options) -> CompiledMachine   when one DFA holds every pattern
                                      -> EngineSet         otherwise

How a set is split:
0. patterns with a selective required factor (required_literals.py) and a bounded
   start before it run on prefiltered engines (prefilter_engine.py): one literal DFA
   finds every factor, each pattern's NFA confirms around the hits. The others are
   packed first; only when they and then the whole set fit one DFA is the set one DFA.
Then, greedy packing in file order of the patterns without a prefilter:
1. each pattern's DFA by subset construction, stopping past min(max_states, 8192)
   states (a pattern past 8192 would make a big table); those patterns run on bit-parallel NFA
   engines (nfa_engine.py), packed in file order up to 512 positions an engine,
   bounded and unbounded apart. (When all the other patterns make one DFA, up to 4
   such patterns are tried again with the full `max_states`, so that a set whose DFA
   fits stays one DFA; a set of one pattern gets the full `max_states` at once.)
2. the patterns that fit are packed in file order: the current group's DFA times
   the next pattern's minimal DFA (automata/dfa_product.py); while the product holds at most
   `max_states` states the pattern joins the group, else the group becomes a DFA
   engine and the pattern starts the next group. Once a group has closed (the set is
   several engines anyway), a product may also hold at most twice its parts' states,
   or 1024 (dfa_product.growth_limit: tables). Products are not minimised (Moore's
   rounds over a big product cost seconds, and a product of minimal DFAs of unrelated
   patterns is close to minimal), except when the whole set is one DFA: then it is
   the minimal DFA, numbered breadth-first.
A DFA engine is a CompiledMachine over all the set's tags (its states report only
its own patterns' tags), so its counts and matches need no renumbering.
"""

from __future__ import annotations

from dataclasses import dataclass

from parafuse.grammar.diagnostics import Location
from parafuse.grammar.fsm_ast import PatternSet

from ..automata.dfa_product import (
    ProductTooLarge,
    TaggedDfa,
    growth_limit,
    minimal,
    product,
    renumbered,
)
from ..automata.nfa import build_position_automaton
from ..automata.pattern_sets import check_unique_tags
from ..compiled import CompiledMachine
from ..options import MachineOptions
from .engine_tables import dfa_machine, minimal_tagged_dfa
from .nfa_engine import (
    ENGINE_POSITIONS,
    NfaEngine,
    check_nfa_pattern,
    longest_match,
    nfa_engine,
)
from .prefilter_engine import PrefilterEngine, prefilter_engines, prefilterable

PATTERN_STATES = 8192  # a pattern's subset DFA past this runs on an NFA engine (see above)
RETRY_CAPPED = 4  # patterns past PATTERN_STATES tried again when the rest is one DFA


@dataclass(frozen=True)
class DfaEngine:
    patterns: tuple[int, ...]  # tag indices of its patterns
    machine: CompiledMachine


Engine = DfaEngine | NfaEngine | PrefilterEngine


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
    if isinstance(engine, PrefilterEngine):
        return "prefilter"
    return "dfa" if isinstance(engine, DfaEngine) else "nfa"


def pattern_dfa(pattern_set: PatternSet, index: int, max_states: int) -> TaggedDfa | None:
    """The minimal DFA of one pattern, or None when its subset DFA passes `max_states`."""
    automaton = build_position_automaton([(index, pattern_set.patterns[index].regex)])
    return minimal_tagged_dfa(automaton, max_states)


def _joined(group: TaggedDfa, dfa: TaggedDfa, max_states: int) -> TaggedDfa | None:
    """The product of a group and a pattern if it fits in `max_states` as it is (not
    minimised: Moore's rounds over big products cost more than they save)."""
    try:
        return product(group, dfa, max_states)
    except ProductTooLarge:
        return None


def _fits_whole(pattern_set: PatternSet, group: tuple[list[int], TaggedDfa],
                capped: list[int], max_states: int) -> tuple[list[int], TaggedDfa] | None:
    """The one DFA of the whole set when the patterns past the per-pattern cap join the
    only group within `max_states` (tried for a few such patterns only), else None."""
    if len(capped) > RETRY_CAPPED:
        return None
    indices, dfa = group
    for index in capped:
        alone = pattern_dfa(pattern_set, index, max_states)
        joined = None if alone is None else _joined(dfa, alone, max_states)
        if joined is None:
            return None
        indices, dfa = indices + [index], joined
    return sorted(indices), minimal(dfa)


def pack_groups(pattern_set: PatternSet, max_states: int, indices: list[int] | None = None,
                first_only: bool = False
                ) -> tuple[list[tuple[list[int], TaggedDfa]], list[int]]:
    """(DFA groups: (pattern indices, minimal DFA), patterns that fit no DFA alone) of
    the patterns `indices` (default: all), in that order. With `first_only`, stops as
    soon as the result cannot be one DFA (a second group, or too many too big)."""
    groups: list[tuple[list[int], TaggedDfa]] = []
    too_big: list[int] = []
    current: tuple[list[int], TaggedDfa] | None = None
    cap = min(max_states, PATTERN_STATES) if len(pattern_set.patterns) > 1 else max_states
    for index in range(len(pattern_set.patterns)) if indices is None else indices:
        dfa = pattern_dfa(pattern_set, index, cap)
        if dfa is None:
            too_big.append(index)
            if first_only and len(too_big) > RETRY_CAPPED:
                return [], too_big
            continue
        if current is not None:  # once the set is split, products may not blow up
            joined = _joined(current[1], dfa, growth_limit(current[1], dfa, max_states)
                             if groups else max_states)
            if joined is not None:
                current = (current[0] + [index], joined)
                continue
            if first_only:
                return [current, ([index], dfa)], too_big
            groups.append((current[0], renumbered(current[1])))
        current = ([index], dfa)
    if current is not None:
        groups.append((current[0], renumbered(current[1])))
    if len(groups) == 1 and too_big and cap < max_states:
        whole = _fits_whole(pattern_set, groups[0], too_big, max_states)
        if whole is not None:
            return [whole], []
    return groups, too_big


def nfa_groups(pattern_set: PatternSet, indices: list[int]) -> list[list[int]]:
    """Patterns that fit no DFA, packed in file order into NFA engines of at most
    ENGINE_POSITIONS positions, bounded and unbounded ones apart (a bounded engine runs
    its chunks in parallel)."""
    groups: list[list[int]] = []
    current: dict[bool, tuple[list[int], int]] = {}
    for index in indices:
        pattern = pattern_set.patterns[index]
        automaton = build_position_automaton([(index, pattern.regex)])
        check_nfa_pattern(automaton, pattern)
        bounded = longest_match(automaton) is not None
        members, positions = current.get(bounded, ([], 0))
        if members and positions + automaton.position_count > ENGINE_POSITIONS:
            groups.append(members)
            members, positions = [], 0
        current[bounded] = (members + [index], positions + automaton.position_count)
    groups += [members for members, _ in current.values()]
    return sorted(groups)


def compile_pattern_set(pattern_set: PatternSet, options: MachineOptions
                        ) -> CompiledMachine | EngineSet:
    """One DFA when every pattern fits in one, else the engines described above."""
    check_unique_tags(pattern_set)
    name = pattern_set.name.name
    whole, whole_big = pack_groups(pattern_set, options.max_states, first_only=True)
    if len(whole) == 1 and not whole_big:  # one DFA: the minimal one, numbered breadth-first
        indices, one = whole[0]  # one pattern's DFA is minimal already
        return dfa_machine(pattern_set, one if len(indices) == 1 else minimal(one), options, name)
    # Several engines: the patterns worth a prefilter (only now: a set that fits one DFA
    # never needs their factors) apart, the rest packed into DFAs.
    chosen = prefilterable(pattern_set)
    rest = [index for index in range(len(pattern_set.patterns)) if index not in chosen]
    groups, too_big = pack_groups(pattern_set, options.max_states, rest)
    prefilters, left = prefilter_engines(pattern_set, chosen, options)
    if left:  # factors too many for a literal DFA: back to the other engines
        groups, too_big = pack_groups(pattern_set, options.max_states, sorted(rest + left))
    engines: list[Engine] = [
        DfaEngine(tuple(indices), dfa_machine(pattern_set, dfa, options, f"{name}.{number}"))
        for number, (indices, dfa) in enumerate(groups)]
    for indices in nfa_groups(pattern_set, too_big):
        automaton = build_position_automaton(
            [(index, pattern_set.patterns[index].regex) for index in indices])
        engines.append(nfa_engine(automaton, tuple(indices)))
    engines += prefilters
    return EngineSet(name, tuple(pattern.tag.name for pattern in pattern_set.patterns),
                     tuple(engines), options, pattern_set.location)
