"""Regex -> NFA: the Glushkov position automaton of a pattern set, with assertions.

Every byte class occurrence in a regex becomes one *position* (counted repeats are
expanded into copies, `x{2,4}` = `xx(x(x)?)?`). An NFA state is a position: "the
last byte matched there". A match may start at any boundary, so the first positions
are candidates after every byte. Assertions (`^ $ \\b` ...) consume nothing: they
become conditions (fsm_compiler/automata/assertions.py) on the boundary where they sit, so
every edge carries one: `first[q]` at the boundary before q, `follow[p][q]` between
p and q, `accepting[p][tag]` after p, and `empty_accepts[tag]` where the regex
matches the empty string (only in places an assertion holds it, say `^$` or `\\b`).
An edge that no assertion is involved in carries ALWAYS.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from parafuse.grammar.regex_ast import (
    Alternation,
    Assertion,
    ByteClass,
    Concat,
    Empty,
    Regex,
    RegexNode,
    Repeat,
)

from .assertions import ALWAYS, NEVER, assertion_condition, only_at_start

Edges = dict[int, int]  # position (or tag) -> condition
_AT_START = assertion_condition("^", False)


@dataclass(frozen=True)
class _Fragment:
    first: Edges
    last: Edges
    nullable: int  # the condition under which the fragment matches the empty string


_EMPTY = _Fragment({}, {}, ALWAYS)


def _merged(left: Edges, right: Edges) -> Edges:
    result = dict(left)
    for key, condition in right.items():
        result[key] = result.get(key, NEVER) | condition
    return result


def _merge_into(target: Edges, edges: Edges) -> None:
    for key, condition in edges.items():
        target[key] = target.get(key, NEVER) | condition


def _restricted(edges: Edges, condition: int) -> Edges:
    if condition == ALWAYS:
        return edges
    return {key: c & condition for key, c in edges.items() if c & condition}


@dataclass
class PositionAutomaton:
    byte_masks: list[int] = field(default_factory=list)  # per position: its 256-bit byte set
    follow: list[Edges] = field(default_factory=list)
    first: Edges = field(default_factory=dict)
    accepting: dict[int, Edges] = field(default_factory=dict)  # position -> {tag: condition}
    empty_accepts: Edges = field(default_factory=dict)  # tag -> condition
    has_assertions: bool = False

    @property
    def position_count(self) -> int:
        return len(self.byte_masks)

    @property
    def floating_first(self) -> set[int]:
        """First positions with no condition: candidates after every byte."""
        return {position for position, c in self.first.items() if c == ALWAYS}

    @property
    def anchored_first(self) -> set[int]:
        """First positions held at offset 0 only (a leading `^` or `\\A`)."""
        return {position for position, c in self.first.items() if c == _AT_START}

    @property
    def starts_at_zero_only(self) -> bool:
        """Whether every match starts at offset 0: each first position and empty match
        holds only where no byte precedes (a leading `^` or `\\A` without multi-line)."""
        return only_at_start([*self.first.values(), *self.empty_accepts.values()])

    @property
    def needs_conditions(self) -> bool:
        """Whether an engine must evaluate conditions: some assertion other than a
        leading `^`/`\\A` (which `anchored_first` expresses), or an empty match."""
        return bool(self.empty_accepts) or any(
            c not in (ALWAYS, _AT_START) for c in self.first.values()) or any(
            c != ALWAYS for edges in (*self.follow, *self.accepting.values())
            for c in edges.values())


def build_position_automaton(patterns: Sequence[tuple[int, Regex]]) -> PositionAutomaton:
    """The NFA of `(tag index, regex)` pairs: one automaton, every tag carried."""
    automaton = PositionAutomaton()
    builder = _FragmentBuilder(automaton)
    for tag, regex in patterns:
        fragment = builder.build(regex.body)
        automaton.first = _merged(automaton.first, fragment.first)
        for position, condition in fragment.last.items():
            accepts = automaton.accepting.setdefault(position, {})
            accepts[tag] = accepts.get(tag, NEVER) | condition
        if fragment.nullable:
            automaton.empty_accepts[tag] = automaton.empty_accepts.get(tag, NEVER) | \
                fragment.nullable
    return automaton


class _FragmentBuilder:
    def __init__(self, automaton: PositionAutomaton) -> None:
        self.automaton = automaton

    def build(self, node: RegexNode) -> _Fragment:
        if isinstance(node, ByteClass):
            position = self.automaton.position_count
            self.automaton.byte_masks.append(node.byte_mask)
            self.automaton.follow.append({})
            return _Fragment({position: ALWAYS}, {position: ALWAYS}, NEVER)
        if isinstance(node, Empty):
            return _EMPTY
        if isinstance(node, Assertion):
            self.automaton.has_assertions = True
            return _Fragment({}, {}, assertion_condition(node.kind, node.multiline))
        if isinstance(node, Concat):
            return self.concat_all([self.build(item) for item in node.items])
        if isinstance(node, Alternation):  # merged in place: linear in the alternatives
            first: Edges = {}
            last: Edges = {}
            nullable = NEVER
            for alternative in node.alternatives:
                part = self.build(alternative)
                _merge_into(first, part.first)
                _merge_into(last, part.last)
                nullable |= part.nullable
            return _Fragment(first, last, nullable)
        return self.repeat(node)

    def link(self, last: Edges, first: Edges) -> None:
        """Add the edges from every position of `last` to every position of `first`."""
        follow = self.automaton.follow
        for position, before in last.items():
            targets = follow[position]
            for target, after in first.items():
                condition = before & after
                if condition:
                    targets[target] = targets.get(target, NEVER) | condition

    def concat(self, left: _Fragment, right: _Fragment) -> _Fragment:
        self.link(left.last, right.first)
        return _Fragment(_merged(left.first, _restricted(right.first, left.nullable)),
                         _merged(right.last, _restricted(left.last, right.nullable)),
                         left.nullable & right.nullable)

    def repeat(self, node: Repeat) -> _Fragment:
        if node.max_count is None:
            copies = [self.build(node.item) for _ in range(max(1, node.min_count))]
            self.link(copies[-1].last, copies[-1].first)  # x+: x may start again
            if node.min_count == 0:
                copies[-1] = _optional(copies[-1])
            return self.concat_all(copies)
        copies = [self.build(node.item) for _ in range(node.max_count)]
        mandatory, optional = copies[:node.min_count], copies[node.min_count:]
        tail = _EMPTY
        for copy in reversed(optional):  # x(x(x)?)? keeps the DFA subsets small
            tail = _optional(self.concat(copy, tail))
        return self.concat(self.concat_all(mandatory), tail)

    def concat_all(self, fragments: list[_Fragment]) -> _Fragment:
        result = _EMPTY
        for fragment in fragments:
            result = self.concat(result, fragment)
        return result


def _optional(fragment: _Fragment) -> _Fragment:
    return _Fragment(fragment.first, fragment.last, ALWAYS)
