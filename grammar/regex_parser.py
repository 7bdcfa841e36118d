"""Recursive-descent parser for the byte-level regex subset of docs/fsm-language.md section 4.

The text is a Latin-1 string (one character per byte). Errors are located at the
column of the offending construct inside the regex and say why the construct is
refused, usually that a DFA cannot express it.
"""

from __future__ import annotations

import re

from .diagnostics import CompileError, Location
from .regex_ast import (
    ALL_BYTES,
    Alternation,
    ByteClass,
    Concat,
    Empty,
    Regex,
    RegexNode,
    Repeat,
    TopAlternative,
    is_nullable,
    position_count,
)
from .regex_escapes import EscapeParser, fold_case, mask_of

MAX_REPEAT = 1000
MAX_POSITIONS = 20_000
MAX_GROUP_DEPTH = 100
QUANTIFIER_CHARS = "*+?{"
_POSIX_CLASS = re.compile(r"\[:[A-Za-z]*:\]")
_GROUP_REFUSALS = {
    "=": "a DFA cannot express look-ahead '(?='",
    "!": "a DFA cannot express negative look-ahead '(?!'",
    "<=": "a DFA cannot express look-behind '(?<='",
    "<!": "a DFA cannot express negative look-behind '(?<!'",
    ">": "a DFA cannot express atomic groups '(?>' (they need backtracking)",
    "#": "comments '(?#...)' are not supported inside regexes",
}


def parse_regex(text: str, flags: str, location: Location) -> Regex:
    """Parse `text` (the regex between the slashes); `location` is its first character."""
    return _RegexParser(text, flags, location).parse()


class _RegexParser(EscapeParser):
    def __init__(self, text: str, flags: str, location: Location) -> None:
        super().__init__(text, location)
        self.caseless = "i" in flags
        self.dotall = "s" in flags
        self.depth = 0

    def parse(self) -> Regex:
        alternatives = [self.top_alternative()]
        while self.peek() == "|":
            self.pos += 1
            alternatives.append(self.top_alternative())
        if self.peek() == ")":
            raise self.error("unmatched ')': no group is open here", self.pos)
        regex = Regex(tuple(alternatives), self.span(0, len(self.text)))
        for alternative in regex.alternatives:
            if is_nullable(alternative.body):
                raise CompileError(
                    "this regex can match the empty string, so it would match at every "
                    "offset; a DFA reporting end offsets cannot express that",
                    alternative.location,
                    hint="make every alternative match at least one byte",
                )
        return regex

    def top_alternative(self) -> TopAlternative:
        start = self.pos
        anchored = self.peek() == "^"
        if anchored:
            self.pos += 1
        body = self.sequence()
        return TopAlternative(body, anchored, self.span(start, max(self.pos, start + 1)))

    def alternation(self, start: int) -> RegexNode:
        alternatives = [self.sequence()]
        while self.peek() == "|":
            self.pos += 1
            alternatives.append(self.sequence())
        if len(alternatives) == 1:
            return alternatives[0]
        return Alternation(tuple(alternatives), self.span(start, self.pos))

    def sequence(self) -> RegexNode:
        start = self.pos
        items: list[RegexNode] = []
        while self.peek() not in ("", "|", ")"):
            items.append(self.quantified(self.atom()))
        if not items:
            return Empty(self.span(start, start + 1))
        if len(items) == 1:
            return items[0]
        return Concat(tuple(items), self.span(start, self.pos))

    def atom(self) -> RegexNode:
        start, char = self.pos, self.peek()
        if char == "(":
            return self.group()
        if char == "[":
            return ByteClass(self.byte_class(), self.span(start, self.pos))
        if char in QUANTIFIER_CHARS:
            raise self.error(f"quantifier '{char}' has nothing to repeat", start)
        if char == "^":
            raise self.error("'^' is only allowed at the start of a top-level alternative "
                             "(it anchors that alternative at offset 0)", start)
        if char == "$":
            raise self.error("a DFA that reports every end offset cannot express '$' "
                             "(end-of-input anchor)", start,
                             hint="remove the '$'; matches are reported wherever they end")
        self.pos += 1
        if char == ".":
            mask = ALL_BYTES if self.dotall else ALL_BYTES & ~(1 << 10)
            return ByteClass(mask, self.span(start, self.pos))
        if char == "\\":
            self.pos = start
            mask, _ = self.escape(in_class=False)
        else:
            mask = mask_of(ord(char))
        return ByteClass(self.fold(mask), self.span(start, self.pos))

    def fold(self, mask: int) -> int:
        return fold_case(mask) if self.caseless else mask

    def group(self) -> RegexNode:
        start = self.pos
        self.pos += 1
        if self.peek() == "?":
            self.group_kind(start)
        self.depth += 1
        if self.depth > MAX_GROUP_DEPTH:
            raise self.error(f"groups are nested more than {MAX_GROUP_DEPTH} deep", start)
        body = self.alternation(self.pos)
        self.depth -= 1
        if self.peek() != ")":
            raise self.error("unclosed group: add ')'", start)
        self.pos += 1
        if isinstance(body, Empty):
            return Empty(self.span(start, self.pos))
        return body

    def group_kind(self, start: int) -> None:
        """Accept `(?:`; refuse every other `(?...` form with its reason."""
        rest = self.text[start + 2:]
        if rest.startswith(":"):
            self.pos = start + 3
            return
        for prefix, message in _GROUP_REFUSALS.items():
            if rest.startswith(prefix):
                raise self.error(message, start, width=2 + len(prefix))
        if rest[:1] in ("<", "P", "'"):
            raise self.error("named groups are not supported: use '(?:...)' or '(...)'",
                             start, width=3)
        if rest[:1].isalpha() or rest[:1] == "-":
            raise self.error("inline flags such as '(?i)' are not supported",
                             start, width=3, hint="put flags after the closing '/': /abc/i")
        raise self.error("unknown group syntax '(?': use '(?:...)' or '(...)'", start, width=2)

    def quantified(self, item: RegexNode) -> RegexNode:
        if self.peek() not in QUANTIFIER_CHARS or not self.peek():
            return item
        start = self.pos
        min_count, max_count = self.quantifier()
        if self.peek() == "?":
            self.pos += 1  # lazy: the same set of end offsets
        elif self.peek() == "+":
            raise self.error("a DFA cannot express possessive quantifiers (they need "
                             "backtracking)", start, width=self.pos - start + 1)
        if self.peek() in QUANTIFIER_CHARS and self.peek():
            raise self.error("a quantifier cannot follow another quantifier",
                             self.pos, hint="wrap the repeated part in (?:...) first")
        node = Repeat(item, min_count, max_count, item.location.through(self.span(start, self.pos)))
        if position_count(node) > MAX_POSITIONS:
            raise self.error(f"this repeat expands to more than {MAX_POSITIONS} byte positions",
                             start, width=self.pos - start,
                             hint="use smaller repeat counts")
        return node

    def quantifier(self) -> tuple[int, int | None]:
        char = self.text[self.pos]
        self.pos += 1
        if char == "*":
            return 0, None
        if char == "+":
            return 1, None
        if char == "?":
            return 0, 1
        return self.counted_repeat(self.pos - 1)

    def counted_repeat(self, start: int) -> tuple[int, int | None]:
        match = re.compile(r"(\d*)(,?)(\d*)\}").match(self.text, self.pos)
        if match is None:
            raise self.error("malformed repeat: expected {m}, {m,} or {m,n}", start)
        low, comma, high = match.groups()
        width = match.end() - start
        if not low:
            raise self.error("a repeat needs a lower bound: write {0,n}", start, width=width)
        self.pos = match.end()
        min_count = int(low)
        max_count = None if comma and not high else int(high) if comma else min_count
        if min_count > MAX_REPEAT or (max_count is not None and max_count > MAX_REPEAT):
            raise self.error(f"repeat counts are limited to {MAX_REPEAT}", start, width=width)
        if max_count is not None and min_count > max_count:
            raise self.error(f"repeat {{{min_count},{max_count}}} has its bounds out of order",
                             start, width=width)
        return min_count, max_count

    def byte_class(self) -> int:
        start = self.pos
        self.pos += 1
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        mask, first = 0, True
        while first or self.peek() != "]":
            if not self.peek():
                raise self.error("unclosed class: add ']'", start)
            if _POSIX_CLASS.match(self.text, self.pos):
                width = _POSIX_CLASS.match(self.text, self.pos).end() - self.pos
                raise self.error("POSIX classes such as '[:alpha:]' are not supported",
                                 self.pos, width=width, hint="spell the class out: [A-Za-z]")
            mask |= self.class_item()
            first = False
        self.pos += 1
        mask = self.fold(mask)
        return ALL_BYTES & ~mask if negated else mask
