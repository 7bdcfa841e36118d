"""Prefiltered engines: patterns with a selective required factor run only around the
places where one of their factors occurs (docs/fsm.md "Prefiltered engines").

One engine holds several patterns. Its *literal DFA* is the unanchored DFA of every
pattern's factors (required_literals.py), tagged with the pattern's tag: one pass
over the input reports (q, tag) for every end q of a factor of that pattern. Every
match [s, e) of a pattern contains an occurrence of one of its factors ending at some
q with s <= q - shortest (`shortest`: the shortest factor), s >= q - reach (`reach`:
the most bytes from a match's start to its factor's end, when bounded), and every
byte of data[s, q) in `before` (the bytes a match may hold up to its factor's end).
So the matches are exactly those that start in the *start ranges* [first, q -
shortest] of the hits, `first` found by scanning left from q while the bytes are in
`before`, at most `reach` bytes, and never past the previous range (they merge).

Each pattern is confirmed by its own bit-parallel NFA (nfa_engine.py) in one sweep over
its sorted, merged start ranges: at each boundary the NFA reports as usual; new
threads start (`first` is injected) only inside a start range; outside one the run
goes on while a thread is alive, then jumps to the next range with an empty state.
The NFA reads the true bytes around every boundary, so assertions hold as in a full
run, and every (offset, tag) is reported once. A run may also be split between
ranges (the parallel runtime does): each part starts empty at its first range and
runs until its threads die, and the union of the parts, without duplicates, is the
same list.
"""

from __future__ import annotations

from dataclasses import dataclass

from parafuse.grammar.diagnostics import Location
from parafuse.grammar.fsm_ast import PatternSet
from parafuse.grammar.regex_ast import Alternation, ByteClass, Concat, Regex

from ..automata.dfa_product import TaggedDfa
from ..automata.nfa import build_position_automaton
from ..compiled import CompiledMachine
from ..options import MachineOptions
from ..reference_executor import run_reference
from .engine_tables import dfa_machine, minimal_tagged_dfa
from .guards import Guard, guard_for, rarer_side, split_guard
from .literal_patterns import LiteralEnds, literal_ends
from .nfa_engine import MAX_POSITIONS, NfaEngine, NfaRunner, boundary_condition, nfa_engine
from .required_literals import Factors, required_factors

MAX_PREFILTERED = 2048  # patterns in one engine (more: its literal DFA grows large; uap-core's
# 1,090 in one: one literal pass of 101 ms where two took 99 + 40)


@dataclass(frozen=True)
class ConfirmedPattern:
    """Patterns of a prefiltered engine with the same factors: the literal DFA reports
    their factors with `tag` (the first one's), one NFA (of them all) confirms them."""

    tag: int
    factors: Factors
    nfa: NfaEngine
    # literals the patterns' matches hold near the factor, one a pattern (empty: not all have one)
    guards: tuple[Guard, ...] = ()
    # each pattern's strings, compared at the factor ends in place of the NFA's sweep
    # (literal_patterns.py; empty: not every pattern is a literal one)
    literals: tuple[LiteralEnds, ...] = ()

    @property
    def tags(self) -> tuple[int, ...]:
        return self.nfa.patterns

    @property
    def reach(self) -> int | None:
        return self.factors.reach


@dataclass(frozen=True, eq=False)
class PrefilterEngine:
    patterns: tuple[int, ...]  # tag indices, ascending
    literals: CompiledMachine  # the literal DFA: (end of a factor, the pattern's tag)
    confirms: tuple[ConfirmedPattern, ...]  # by first pattern

    @property
    def factor_count(self) -> int:  # counted once per group of patterns with equal factors
        return sum(len(confirm.factors.factors) for confirm in self.confirms)

    def table_bytes(self) -> int:
        return self.literals.table_bytes() + sum(
            confirm.nfa.table_bytes() for confirm in self.confirms)


def prefilterable(pattern_set: PatternSet) -> dict[int, Factors]:
    """The patterns worth a prefilter: a selective factor set with a bounded reach, and
    an NFA within MAX_POSITIONS. Not those whose matches all start at offset 0 (a leading
    `^`): every factor found past their first bytes would be confirmed for nothing, where
    a DFA engine carries them dead after a few bytes and an NFA engine stops once none of
    its threads lives. Of a split-guarded pair, the rarer side is scanned for (rarer_side)."""
    chosen = {}
    for index, pattern in enumerate(pattern_set.patterns):
        factors = required_factors(pattern.regex)
        if factors is None:
            continue
        automaton = build_position_automaton([(index, pattern.regex)])
        if automaton.position_count <= MAX_POSITIONS and not automaton.starts_at_zero_only:
            chosen[index] = rarer_side(pattern.regex, factors) or factors
    return chosen


def _factor_regex(factors: Factors, location: Location) -> Regex:
    alternatives = tuple(Concat(tuple(ByteClass(mask, location) for mask in factor), location)
                         for factor in factors.factors)
    return Regex(Alternation(alternatives, location), location)


def _literal_dfa(pattern_set: PatternSet, chosen: dict[int, Factors],
                 max_states: int) -> TaggedDfa | None:
    location = pattern_set.location
    automaton = build_position_automaton(
        [(index, _factor_regex(factors, location)) for index, factors in sorted(chosen.items())])
    return minimal_tagged_dfa(automaton, max_states)


def _joined(factors: list[Factors]) -> Factors:
    """Equal factors of several patterns: the widest reach and bytes before."""
    reaches = [found.reach for found in factors]
    before = 0
    for found in factors:
        before |= found.before
    reach = None if None in reaches else max(reaches)
    return Factors(factors[0].factors, min(found.bits for found in factors), reach, before)


def _all_or_none(found: list) -> tuple:
    return () if None in found else tuple(found)


def _confirmed(pattern_set: PatternSet, chosen: dict[int, Factors], group: list[int]
               ) -> tuple[ConfirmedPattern, ...]:
    """The group's patterns, those with equal factors confirmed together: those with a
    bounded reach, and apart from them those without one and with the same bytes before
    (joined to one unbounded pattern whose `before` holds nearly every byte, the start
    ranges of 110 uap-core patterns reached back to the previous range: one range over
    the whole input, swept by an NFA of 12,936 positions); guarded and literal patterns
    apart from the rest."""
    by_factors: dict[tuple, list[int]] = {}
    guards = {index: guard_for(pattern_set.patterns[index].regex, chosen[index]) or
              split_guard(pattern_set.patterns[index].regex, chosen[index]) for index in group}
    literals = {index: literal_ends(pattern_set.patterns[index].regex, chosen[index])
                for index in group}
    for index in group:
        found = chosen[index]
        # patterns with a guard, and literal ones, apart: a member without either would
        # make every factor end of the others start a range that their NFA sweeps
        key = (found.factors, None if found.reach is not None else found.before,
               guards[index] is None, literals[index] is None)
        by_factors.setdefault(key, []).append(index)
    confirms = []
    for members in sorted(by_factors.values()):
        automaton = build_position_automaton(
            [(index, pattern_set.patterns[index].regex) for index in members])
        confirms.append(ConfirmedPattern(members[0], _joined([chosen[i] for i in members]),
                                         nfa_engine(automaton, tuple(members)),
                                         _all_or_none([guards[i] for i in members]),
                                         _all_or_none([literals[i] for i in members])))
    return tuple(confirms)


def prefilter_engines(pattern_set: PatternSet, chosen: dict[int, Factors],
                      options: MachineOptions) -> tuple[list[PrefilterEngine], list[int]]:
    """The chosen patterns as engines of at most MAX_PREFILTERED patterns whose literal
    DFA fits `max_states` (a group that does not fit is halved); patterns whose factors
    alone do not fit are returned to run on the other engines."""
    pending = [sorted(chosen)[begin:begin + MAX_PREFILTERED]
               for begin in range(0, len(chosen), MAX_PREFILTERED)]
    engines: list[PrefilterEngine] = []
    left: list[int] = []
    while pending:
        group = pending.pop(0)
        confirms = _confirmed(pattern_set, chosen, group)
        dfa = _literal_dfa(pattern_set, {confirm.tag: confirm.factors for confirm in confirms},
                           options.max_states)
        if dfa is None:
            if len(group) == 1:
                left += group
            else:
                pending[:0] = [group[:len(group) // 2], group[len(group) // 2:]]
            continue
        name = f"{pattern_set.name.name}.literals{len(engines)}"
        engines.append(PrefilterEngine(tuple(group), dfa_machine(pattern_set, dfa, options, name),
                                       confirms))
    return engines, sorted(left)


def start_ranges(hits: list[int], confirm: ConfirmedPattern, data: bytes
                 ) -> list[tuple[int, int]]:
    """Merged inclusive start ranges of the sorted factor ends `hits` (see above)."""
    ranges: list[tuple[int, int]] = []
    reach, before = confirm.reach, confirm.factors.before
    for q in hits:
        lower = 0 if reach is None else max(0, q - reach)
        if ranges:
            lower = max(lower, ranges[-1][1] + 1)
        first = q
        while first > lower and before >> data[first - 1] & 1:
            first -= 1
        last = q - confirm.factors.shortest
        if ranges and first <= ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], last)
        else:
            ranges.append((first, last))
    return ranges


def confirm_sweep(runner: NfaRunner, data: bytes, ranges: list[tuple[int, int]]
                  ) -> list[tuple[int, int]]:
    """Matches starting in `ranges` (sorted, disjoint), by offset then tag."""
    size, found = len(data), []
    index, state = 0, 0
    offset = ranges[0][0] if ranges else size + 1
    while offset <= size:
        where = boundary_condition(data, offset)
        found += [(offset, tag) for tag in runner.reports(state, where)]
        if offset == size:
            break
        inject = index < len(ranges) and ranges[index][0] <= offset
        state = runner.step(state, data[offset], where, inject)
        offset += 1
        while index < len(ranges) and ranges[index][1] < offset:
            index += 1
        if state == 0 and not (index < len(ranges) and ranges[index][0] <= offset):
            if index == len(ranges):
                break
            offset = ranges[index][0]
    return found


def run_prefilter(engine: PrefilterEngine, runners: list[NfaRunner], data: bytes
                  ) -> list[tuple[int, int]]:
    """The engine's matches in the reference executor, by offset then tag."""
    hits = run_reference(engine.literals, data, True).matches or []
    found: list[tuple[int, int]] = []
    for confirm, runner in zip(engine.confirms, runners, strict=True):
        ends = [q for q, tag in hits if tag == confirm.tag]
        ranges = start_ranges(ends, confirm, data)
        found += confirm_sweep(runner, data, ranges)
    return sorted(found)
