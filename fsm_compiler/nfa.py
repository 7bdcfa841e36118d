"""Regex -> NFA: the Glushkov position automaton of a pattern set.

Every byte class occurrence in a regex becomes one *position* (counted repeats are
expanded into copies, `x{2,4}` = `xx(x(x)?)?`). An NFA state is a position: "the
last byte matched there". `follow[p]` lists the positions that can match next.
A pattern without `^` may start anywhere, so its first positions are candidates
after every byte (the unanchored prefix); anchored first positions only at offset 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from parafuse.grammar.regex_ast import (
    Alternation,
    ByteClass,
    Concat,
    Empty,
    Regex,
    RegexNode,
    Repeat,
)


@dataclass(frozen=True)
class _Fragment:
    first: frozenset[int]
    last: frozenset[int]
    nullable: bool


_EMPTY = _Fragment(frozenset(), frozenset(), True)


@dataclass
class PositionAutomaton:
    byte_masks: list[int] = field(default_factory=list)  # per position: its 256-bit byte set
    follow: list[set[int]] = field(default_factory=list)
    anchored_first: set[int] = field(default_factory=set)  # candidates at offset 0 only
    floating_first: set[int] = field(default_factory=set)  # candidates after every byte
    accepting: dict[int, set[int]] = field(default_factory=dict)  # position -> tag indices

    @property
    def position_count(self) -> int:
        return len(self.byte_masks)


def build_position_automaton(patterns: Sequence[tuple[int, Regex]]) -> PositionAutomaton:
    """The NFA of `(tag index, regex)` pairs: one automaton, every tag carried."""
    automaton = PositionAutomaton()
    builder = _FragmentBuilder(automaton)
    for tag, regex in patterns:
        for alternative in regex.alternatives:
            fragment = builder.build(alternative.body)
            first = automaton.anchored_first if alternative.anchored else automaton.floating_first
            first.update(fragment.first)
            for position in fragment.last:
                automaton.accepting.setdefault(position, set()).add(tag)
    return automaton


class _FragmentBuilder:
    def __init__(self, automaton: PositionAutomaton) -> None:
        self.automaton = automaton

    def build(self, node: RegexNode) -> _Fragment:
        if isinstance(node, ByteClass):
            position = self.automaton.position_count
            self.automaton.byte_masks.append(node.byte_mask)
            self.automaton.follow.append(set())
            return _Fragment(frozenset({position}), frozenset({position}), False)
        if isinstance(node, Empty):
            return _EMPTY
        if isinstance(node, Concat):
            result = _EMPTY
            for item in node.items:
                result = self.concat(result, self.build(item))
            return result
        if isinstance(node, Alternation):
            parts = [self.build(alternative) for alternative in node.alternatives]
            return _Fragment(frozenset().union(*(p.first for p in parts)),
                             frozenset().union(*(p.last for p in parts)),
                             any(p.nullable for p in parts))
        return self.repeat(node)

    def concat(self, left: _Fragment, right: _Fragment) -> _Fragment:
        for position in left.last:
            self.automaton.follow[position].update(right.first)
        return _Fragment(left.first | right.first if left.nullable else left.first,
                         right.last | left.last if right.nullable else right.last,
                         left.nullable and right.nullable)

    def loop(self, fragment: _Fragment) -> _Fragment:
        """`x+`: after the last byte of x, x may start again."""
        for position in fragment.last:
            self.automaton.follow[position].update(fragment.first)
        return fragment

    def repeat(self, node: Repeat) -> _Fragment:
        if node.max_count is None:
            copies = [self.build(node.item) for _ in range(max(1, node.min_count))]
            copies[-1] = self.loop(copies[-1])
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
    return _Fragment(fragment.first, fragment.last, True)
