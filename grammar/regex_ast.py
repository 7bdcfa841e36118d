"""AST of the byte-level regex subset (docs/fsm-language.md section 4). Every node has a `location`.

Byte sets are 256-bit integers: bit `b` set means byte `b` is in the set. Flags are
already applied by the parser (`i` folds case into every set, `s` widens `.`), so
the AST means the same thing without them.
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


RegexNode = ByteClass | Empty | Concat | Alternation | Repeat


@dataclass(frozen=True)
class TopAlternative:
    """One top-level alternative; `anchored` when it starts with `^` (offset 0 only)."""

    body: RegexNode
    anchored: bool
    location: Location


@dataclass(frozen=True)
class Regex:
    alternatives: tuple[TopAlternative, ...]
    location: Location


def is_nullable(node: RegexNode) -> bool:
    """Whether `node` matches the empty string."""
    if isinstance(node, ByteClass):
        return False
    if isinstance(node, Empty):
        return True
    if isinstance(node, Concat):
        return all(is_nullable(item) for item in node.items)
    if isinstance(node, Alternation):
        return any(is_nullable(alt) for alt in node.alternatives)
    return node.min_count == 0 or is_nullable(node.item)


def position_count(node: RegexNode) -> int:
    """Byte positions after expanding counted repeats (the size of the NFA)."""
    if isinstance(node, ByteClass):
        return 1
    if isinstance(node, Empty):
        return 0
    if isinstance(node, Concat):
        return sum(position_count(item) for item in node.items)
    if isinstance(node, Alternation):
        return sum(position_count(alt) for alt in node.alternatives)
    return position_count(node.item) * expanded_copies(node)


def expanded_copies(node: Repeat) -> int:
    """How many copies of the item the expansion of `node` makes (see fsm_compiler/nfa.py)."""
    if node.max_count is None:
        return max(1, node.min_count)
    return node.max_count
