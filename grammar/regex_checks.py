"""What Hyperscan refuses about a whole regex, as located errors (docs/fsm-language.md section 4).

- a regex that matches the empty string with no assertion holding it in place
  (`a?`, `x*`, `(|a)`): it would match at every offset;
- an *embedded* start anchor (`^`, `\\A`) after anything that consumes a byte or
  tests a word boundary, and an *embedded* end anchor (`$`, `\\z`, `\\Z`) before
  any such thing, including through repeats (`(^a)+`, `(a$)+`).
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
    _contents(regex.body)


def _contents(node: RegexNode) -> _Contents:
    contents = _Contents()
    if isinstance(node, ByteClass):
        contents.first["byte"] = node.location
    elif isinstance(node, Assertion):
        kind = "start" if node.kind in START_ANCHORS else "end" if node.kind in END_ANCHORS \
            else "word"
        contents.first[kind] = node.location
    elif isinstance(node, Concat):
        for item in node.items:
            inner = _contents(item)
            _check_order(contents, inner)
            contents.merge(inner)
    elif isinstance(node, Alternation):
        for alternative in node.alternatives:
            contents.merge(_contents(alternative))
    elif isinstance(node, Repeat):
        contents = _contents(node.item)
        if node.max_count is None or node.max_count > 1:
            _check_order(contents, contents)
    else:
        assert isinstance(node, Empty)
    return contents


def _check_order(before: _Contents, after: _Contents) -> None:
    start = after.has("start")
    if start is not None and before.has("byte", "word", "end") is not None:
        raise CompileError("embedded start anchor: '^' and '\\A' may only come before "
                           "everything else in the regex (Hyperscan refuses them elsewhere)",
                           start, hint="use the 'm' flag and '^' at the start for the start of "
                                       "every line, or match '\\n' explicitly")
    end = before.has("end")
    if end is not None and after.has("byte", "word", "start") is not None:
        raise CompileError("embedded end anchor: '$', '\\z' and '\\Z' may only come after "
                           "everything else in the regex (Hyperscan refuses them elsewhere)",
                           end, hint="use the 'm' flag and '$' at the end for the end of "
                                     "every line, or match '\\n' explicitly")
