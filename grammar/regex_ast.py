"""AST of the pattern-set regex syntax (docs/fsm-language.md section 4); every node has a location.

Byte sets are 256-bit integers: bit `b` set means byte `b` is in the set. Flags are
already applied by the parser (`i` folds case into every set, `s` widens `.`, `m`
is recorded in each `^`/`$` assertion), so the AST means the same without them.

A regex is one node; `^ \\A $ \\z \\Z \\b \\B` are `Assertion` nodes wherever they
occur (fsm_compiler/automata/assertions.py gives their meaning).
"""

from __future__ import annotations

from dataclasses import dataclass

from .diagnostics import Location

ALL_BYTES = (1 << 256) - 1


@dataclass(frozen=True)
class ByteClass:
    """One byte from `byte_mask` (a literal, `.`, an escape or a `[...]` class)."""

    byte_mask: int
    location: Location


@dataclass(frozen=True)
class Empty:
    """Matches the empty string only: `()` or an empty alternative."""

    location: Location


@dataclass(frozen=True)
class Assertion:
    """A zero-width test of the bytes around a boundary.

    `kind` is one of `^ $ A z Z b B` (`A z Z b B` for the escapes `\\A` ...);
    `multiline` is the `m` flag in force where a `^` or `$` was written.
    """

    kind: str
    multiline: bool
    location: Location


@dataclass(frozen=True)
class Concat:
    items: tuple[RegexNode, ...]
    location: Location


@dataclass(frozen=True)
class Alternation:
    alternatives: tuple[RegexNode, ...]
    location: Location


@dataclass(frozen=True)
class Repeat:
    """`item{min_count,max_count}`; `max_count` None is unbounded (`*`, `+`, `{m,}`)."""

    item: RegexNode
    min_count: int
    max_count: int | None
    location: Location


RegexNode = ByteClass | Empty | Assertion | Concat | Alternation | Repeat


@dataclass(frozen=True)
class Regex:
    body: RegexNode
    location: Location


START_ANCHORS = frozenset("^A")
END_ANCHORS = frozenset("$zZ")


def is_nullable(node: RegexNode) -> bool:
    """Whether `node` matches the empty string with no assertion holding it in place."""
    return matches_no_byte(node, assertions=False)


def matches_no_byte(node: RegexNode, assertions: bool) -> bool:
    """Whether `node` can match without a byte; an assertion counts as such a match where
    `assertions` is set (Hyperscan's `empty()`), else it holds the match (`is_nullable`)."""
    if isinstance(node, ByteClass):
        return False
    if isinstance(node, Assertion):
        return assertions
    if isinstance(node, Empty):
        return True
    if isinstance(node, Concat):
        return all(matches_no_byte(item, assertions) for item in node.items)
    if isinstance(node, Alternation):
        return any(matches_no_byte(alt, assertions) for alt in node.alternatives)
    return node.min_count == 0 or matches_no_byte(node.item, assertions)


def position_count(node: RegexNode) -> int:
    """Byte positions after expanding counted repeats (the size of the NFA)."""
    if isinstance(node, ByteClass):
        return 1
    if isinstance(node, Empty | Assertion):
        return 0
    if isinstance(node, Concat):
        return sum(position_count(item) for item in node.items)
    if isinstance(node, Alternation):
        return sum(position_count(alt) for alt in node.alternatives)
    return position_count(node.item) * expanded_copies(node)


def expanded_copies(node: Repeat) -> int:
    """How many copies of the item the expansion of `node` makes (fsm_compiler/automata/nfa.py)."""
    if node.max_count is None:
        return max(1, node.min_count)
    return node.max_count
