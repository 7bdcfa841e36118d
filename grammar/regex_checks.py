"""What Hyperscan refuses about a whole regex, as located errors (docs/fsm-language.md section 4).

- a regex that matches the empty string with no assertion holding it in place
  (`a?`, `x*`, `(|a)`): it would match at every offset;
- on the regex as written: an *embedded* start anchor (`^`, `\\A`) after anything that
  consumes a byte or tests a word boundary, and an *embedded* end anchor (`$`, `\\z`,
  `\\Z`) before any such thing, including through repeats (`(^a)+`, `(a$)+`);
- on the tree Hyperscan optimises before building its graph (`_optimised`: while
  nothing before holds the match in place, a part that can match the empty string is
  dropped and a repeat keeps only its minimum, so `(?:^){1,2}a` is `^a` there and
  `(?:$)?^` is `^`):
  - an end anchor before a start anchor (`$^`);
  - a start anchor after a multi-line `^` (`^^a`, `^\\Aa` with flag m, `^(?:(?m)^)+a`,
    also through the loop of an unbounded repeat): Hyperscan builds a multi-line `^`
    from a `\\n` position that may not lead to the start of the input ("Embedded start
    anchors not supported");
  - a repeat making more than one copy (its bounded maximum, else its minimum but at
    least 1: `{2}`, `{2,}`, and `{0,2}` after an anchor) of a group that can begin with a start
    anchor (`(?:^){2}a`, `(?:(?:\\A)+){2}a`), with or without flag m ("Embedded anchors
    not supported"); `(?:^)+a` and `(?:\\b){2}a` are fine.

The repeat `{0}` (and `{0,0}`) is refused by the parser ("Invalid repeat").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .diagnostics import CompileError, Location
from .regex_ast import (
    END_ANCHORS,
    START_ANCHORS,
    Alternation,
    Assertion,
    ByteClass,
    Concat,
    Empty,
    Regex,
    RegexNode,
    Repeat,
    is_nullable,
    matches_no_byte,
)


@dataclass
class _Contents:
    """The first location of each kind of thing a node holds: 'byte', 'word', 'start', 'end'."""

    first: dict[str, Location] = field(default_factory=dict)

    def merge(self, other: _Contents) -> None:
        for kind, location in other.first.items():
            self.first.setdefault(kind, location)

    def has(self, *kinds: str) -> Location | None:
        return next((self.first[k] for k in kinds if k in self.first), None)


def check_regex(regex: Regex) -> None:
    if is_nullable(regex.body):
        raise CompileError("this regex can match the empty string with nothing holding it in "
                           "place, so it would match at every offset (Hyperscan refuses it)",
                           regex.location,
                           hint="make every alternative match at least one byte, or hold the "
                                "empty match in place with an assertion such as ^ or \\b")
    _contents(regex.body, _check_order)
    optimised = _optimised(regex.body)
    _contents(optimised, _check_end_before_start, loops=False)
    _check_copies_and_loops(optimised)


def _contents(node: RegexNode, check, loops: bool = True) -> _Contents:
    """What `node` holds; `check(before, after)` runs on every two parts that follow one
    another: each part of a sequence after the ones before it, and with `loops` a part
    repeated more than once after itself."""
    contents = _Contents()
    if isinstance(node, ByteClass):
        contents.first["byte"] = node.location
    elif isinstance(node, Assertion):
        kind = "start" if node.kind in START_ANCHORS else "end" if node.kind in END_ANCHORS \
            else "word"
        contents.first[kind] = node.location
    elif isinstance(node, Concat):
        for item in node.items:
            inner = _contents(item, check, loops)
            check(contents, inner)
            contents.merge(inner)
    elif isinstance(node, Alternation):
        for alternative in node.alternatives:
            contents.merge(_contents(alternative, check, loops))
    elif isinstance(node, Repeat):
        contents = _contents(node.item, check, loops)
        if loops and (node.max_count is None or node.max_count > 1):
            check(contents, contents)
    else:
        assert isinstance(node, Empty)
    return contents


def _can_be_empty(node: RegexNode) -> bool:
    """Whether `node` can match no byte at all, assertions included (Hyperscan's `empty()`)."""
    return matches_no_byte(node, assertions=True)


def _edge_assertion(node: RegexNode, wanted, from_end: bool) -> Location | None:
    """An assertion `wanted` accepts that `node` can begin with (before any byte), or with
    `from_end` end with (after its last byte); else None."""
    if isinstance(node, Assertion):
        return node.location if wanted(node) else None
    if isinstance(node, Concat):
        for item in reversed(node.items) if from_end else node.items:
            found = _edge_assertion(item, wanted, from_end)
            if found is not None or not _can_be_empty(item):
                return found
        return None
    if isinstance(node, Alternation):
        return next((found for found in (_edge_assertion(a, wanted, from_end)
                                         for a in node.alternatives) if found), None)
    if isinstance(node, Repeat):
        return _edge_assertion(node.item, wanted, from_end) if node.max_count != 0 else None
    return None


def _leading_start_anchor(node: RegexNode) -> Location | None:
    """A start anchor `node` can begin with (before any byte), else None."""
    return _edge_assertion(node, lambda a: a.kind in START_ANCHORS, from_end=False)


def _optimised(node: RegexNode) -> RegexNode:
    """The tree Hyperscan builds its graph from (its `Component::optimise(true)` on the root):
    while nothing kept before a node holds the match in place (the match may start anywhere
    before it), a part that can match the empty string unheld (`is_nullable`) is dropped
    (`(?:^){0,2}a` is `a`) and a repeat keeps only its minimum (`(?:^){1,2}a` is `^a`), inside
    alternatives too but not inside repeats. The matches stay the same."""
    if is_nullable(node):
        return Empty(node.location)
    if isinstance(node, Repeat):
        return Repeat(node.item, node.min_count, node.min_count, node.location)
    if isinstance(node, Alternation):
        return Alternation(tuple(map(_optimised, node.alternatives)), node.location)
    if not isinstance(node, Concat):
        return node
    items: list[RegexNode] = []
    for item in node.items:
        if items:
            items.append(item)
        elif not is_nullable(item):
            items.append(_optimised(item))
    return Concat(tuple(items), node.location)


def _trailing_line_start(node: RegexNode) -> Location | None:
    """A multi-line `^` that `node` can end with (after its last byte, if any): Hyperscan
    builds it from a `\\n` position, which may not lead to a start anchor."""
    return _edge_assertion(node, lambda a: a.kind == "^" and a.multiline, from_end=True)


def _check_copies_and_loops(node: RegexNode) -> None:
    """Hyperscan's refusals of start anchors in the optimised tree (see `_optimised`)."""
    if isinstance(node, Concat):
        for index, item in enumerate(node.items):
            _check_copies_and_loops(item)
            line = _trailing_line_start(item)
            for later in node.items[index + 1:]:
                anchor = _leading_start_anchor(later)
                if line is not None and anchor is not None:
                    _refuse_after_line_start(anchor)
                if not _can_be_empty(later):
                    break
    elif isinstance(node, Alternation):
        for alternative in node.alternatives:
            _check_copies_and_loops(alternative)
    elif isinstance(node, Repeat):
        _check_copies_and_loops(node.item)
        _check_copies(node)
        if node.max_count is None and _trailing_line_start(node.item) is not None:
            anchor = _leading_start_anchor(node.item)
            if anchor is not None:
                _refuse_after_line_start(anchor)


def _refuse_after_line_start(anchor: Location) -> None:
    raise CompileError("embedded start anchor: '^' and '\\A' may not follow a multi-line '^' "
                       "(with flag m it also matches after a '\\n', and Hyperscan refuses a "
                       "start anchor after that)", anchor,
                       hint="write the anchor once: '^a' for '^^a', '^\\Aa' or '^(?:^)+a'")


def _check_copies(node: Repeat) -> None:
    """Hyperscan expands a repeat into copies of its item (the bounded maximum, else the
    minimum but at least 1) and refuses more than one copy of a leading start anchor."""
    copies = node.max_count if node.max_count is not None else max(node.min_count, 1)
    anchor = _leading_start_anchor(node.item) if copies > 1 else None
    if anchor is not None:
        raise CompileError("embedded start anchor: a group that begins with '^' or '\\A' may "
                           f"not be repeated more than once (this repeat makes {copies} copies; "
                           "Hyperscan refuses it)", anchor,
                           hint="write the anchor once, before the repeat: '^(?:ab){2}' for "
                                "'(?:^ab){2}', '^a' for '(?:^){2}a'")


def _check_order(before: _Contents, after: _Contents) -> None:
    """Hyperscan's checks on the regex as written: a start anchor after a byte or a word
    boundary, an end anchor before one (anchors of the other kind do not count here)."""
    start = after.has("start")
    if start is not None and before.has("byte", "word") is not None:
        raise CompileError("embedded start anchor: '^' and '\\A' may only come before "
                           "everything else in the regex (Hyperscan refuses them elsewhere)",
                           start, hint="use the 'm' flag and '^' at the start for the start of "
                                       "every line, or match '\\n' explicitly")
    end = before.has("end")
    if end is not None and after.has("byte", "word") is not None:
        _refuse_end(end)


def _check_end_before_start(before: _Contents, after: _Contents) -> None:
    """Hyperscan's check on the optimised tree (`_optimised`): an end anchor before a start
    anchor in a sequence (`$^`; but `(?:$)?^` is `^` there). Through the loop of a repeat
    it refuses only what the other checks refuse (`(a$)+`), not `(?:^$)+`: no byte
    carries the end anchor round the loop."""
    end = before.has("end")
    if end is not None and after.has("start") is not None:
        _refuse_end(end)


def _refuse_end(end: Location) -> None:
    raise CompileError("embedded end anchor: '$', '\\z' and '\\Z' may only come after "
                       "everything else in the regex (Hyperscan refuses them elsewhere)",
                       end, hint="use the 'm' flag and '$' at the end for the end of "
                                 "every line, or match '\\n' explicitly")
