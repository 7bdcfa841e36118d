"""Recursive-descent parser for the regex syntax of docs/fsm-language.md section 4.

The text is a Latin-1 string (one character per byte). Flags `i s m x` start as
given after the closing slash; inline flags `(?i)` change them to the end of the
enclosing group, `(?i:...)` inside the group only. Every construct Hyperscan
refuses is a located error saying what to write instead.

The syntax is the PCRE subset Hyperscan accepts; assertions become `Assertion` nodes, and
grammar/regex_checks.py refuses what Hyperscan refuses about their placement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from .diagnostics import Location
from .regex_ast import (
    ALL_BYTES,
    Alternation,
    Assertion,
    ByteClass,
    Concat,
    Empty,
    Regex,
    RegexNode,
    Repeat,
    position_count,
)
from .regex_checks import check_regex
from .regex_classes import COLLATING_ITEM, POSIX_ITEM, ClassParser
from .regex_escapes import BACKREFERENCE_HINT, mask_of

MAX_REPEAT = 32767  # larger bounded repeats Hyperscan refuses ("Bounded repeat is too large")
MAX_POSITIONS = 20_000
MAX_GROUP_DEPTH = 100
_QUANTIFIER = re.compile(r"\{(\d+)(,(\d*))?\}")
_INLINE_FLAGS = re.compile(r"\(\?([imsx]*)(?:-([imsx]*))?([:)])")
_NAMED_GROUP = re.compile(r"\(\?(?:P?<([A-Za-z_][A-Za-z0-9_]*)>|'([A-Za-z_][A-Za-z0-9_]*)')")
_EXTENDED_SPACE = " \t\n\r\f\v"
_ASSERTION_ESCAPES = "AzZbB"
_LOOK_AHEAD = ("match the bytes themselves: 'a(?=b)' reports where 'ab' ends; \\b, \\B and $ "
               "are the zero-width tests available")
_LOOK_BEHIND = "match the bytes themselves: '(?<=a)b' ends where 'ab' ends, at the same offsets"
_GROUP_REFUSALS = (  # (prefix, message, hint)
    ("(?=", "look-ahead '(?=' is not supported (Hyperscan refuses look-around)", _LOOK_AHEAD),
    ("(?!", "negative look-ahead '(?!' is not supported (Hyperscan refuses look-around)",
     _LOOK_AHEAD),
    ("(?<=", "look-behind '(?<=' is not supported (Hyperscan refuses look-around)",
     _LOOK_BEHIND),
    ("(?<!", "negative look-behind '(?<!' is not supported (Hyperscan refuses look-around)",
     None),
    ("(?>", "atomic groups '(?>' are not supported (they need backtracking): write '(?:'", None),
    ("(?(", "conditionals '(?(' are not supported: write an alternation", None),
    ("(?C", "callouts '(?C' are not supported", None),
    ("(?P=", "backreferences '(?P=' are not supported: a DFA cannot express them",
     BACKREFERENCE_HINT),
    ("(?P>", "recursion '(?P>' is not supported", None),
    ("(?R", "recursion '(?R)' is not supported", None),
    ("(?&", "recursion '(?&' is not supported", None),
    ("(?|", "branch reset groups '(?|' are not supported: write '(?:'", None),
)


@dataclass(frozen=True)
class Flags:
    caseless: bool = False
    dotall: bool = False
    multiline: bool = False
    extended: bool = False

    def changed(self, on: str, off: str) -> Flags:
        letters = {"i": "caseless", "s": "dotall", "m": "multiline", "x": "extended"}
        changes = {letters[f]: True for f in on} | {letters[f]: False for f in off}
        return replace(self, **changes)


def parse_regex(text: str, flags: str, location: Location) -> Regex:
    """Parse `text` (the regex between the slashes); `location` is its first character."""
    return _RegexParser(text, flags, location).parse()


def spans_lines_allowed(text: str, flags: str) -> bool:
    """Whether a regex may contain newlines: flag `x`, or leading inline flags that leave
    x set (`(?x)`, `(?xi)`, `(?i)(?x)`, `(?x:...`)."""
    extended, position = "x" in flags, 0
    while (leading := _INLINE_FLAGS.match(text, position)) is not None:
        on, off, end = leading.group(1), leading.group(2) or "", leading.group(3)
        extended = (extended or "x" in on) and "x" not in off
        position = leading.end()
        if end == ":":
            break
    return extended


class _RegexParser(ClassParser):
    def __init__(self, text: str, flags: str, location: Location) -> None:
        super().__init__(text, location)
        self.flags = Flags().changed(flags, "")
        self.depth = 0
        self.quoting = False  # inside \Q...\E
        self.group_names: set[str] = set()

    def parse(self) -> Regex:
        body = self.alternation(0)
        if self.peek() == ")":
            raise self.error("unmatched ')': no group is open here", self.pos)
        regex = Regex(body, self.span(0, len(self.text)))
        check_regex(regex)
        return regex

    def alternation(self, start: int) -> RegexNode:
        alternatives = [self.sequence()]
        while self.peek() == "|":
            self.pos += 1
            alternatives.append(self.sequence())
        if len(alternatives) == 1:
            return alternatives[0]
        return Alternation(tuple(alternatives), self.span(start, self.pos))

    def skip_ignored(self) -> None:
        """Skip `\\Q`/`\\E` markers and, in extended mode, whitespace and `#` comments."""
        while self.pos < len(self.text):
            two = self.text[self.pos:self.pos + 2]
            if self.quoting:
                if two != "\\E":
                    return
                self.quoting = False
            elif two == "\\Q":
                self.quoting = True
            elif two == "\\E":
                pass
            elif self.flags.extended and self.peek() in _EXTENDED_SPACE:
                self.pos += 1
                continue
            elif self.flags.extended and self.peek() == "#":
                end = self.text.find("\n", self.pos)
                if end < 0:
                    raise self.error("unterminated comment: in extended mode a '#' comment "
                                     "ends at a newline (Hyperscan refuses it otherwise)",
                                     self.pos, hint="end the comment with a newline, or "
                                                    "write '\\#' for a literal '#'")
                self.pos = end + 1
                continue
            else:
                return
            self.pos += 2

    def sequence(self) -> RegexNode:
        start = self.pos
        items: list[RegexNode] = []
        while True:
            self.skip_ignored()
            if not self.quoting and self.peek() in ("", "|", ")"):
                break
            if self.quoting and not self.peek():
                break
            grouped = self.peek() == "(" and not self.quoting
            atom = self.atom()
            if atom is not None:
                items.append(self.quantified(atom, bare_assertion=not grouped))
        if not items:
            return Empty(self.span(start, start + 1))
        if len(items) == 1:
            return items[0]
        return Concat(tuple(items), self.span(start, self.pos))

    def atom(self) -> RegexNode | None:
        start, char = self.pos, self.peek()
        if self.quoting:
            self.pos += 1
            return ByteClass(self.fold(mask_of(ord(char))), self.span(start, self.pos))
        if char == "(":
            return self.group()
        if char == "[":
            if POSIX_ITEM.match(self.text, start):
                raise self.error("POSIX classes such as '[:alpha:]' are only allowed inside a "
                                 "class: write [[:alpha:]]", start, width=2)
            if COLLATING_ITEM.match(self.text, start):
                raise self.error("POSIX collating elements such as '[.a.]' are not supported",
                                 start, width=2)
            return ByteClass(self.byte_class(), self.span(start, self.pos))
        if char in "*+?" or (char == "{" and _QUANTIFIER.match(self.text, start)):
            raise self.error(f"quantifier '{char}' has nothing to repeat", start)
        if char in "^$":
            self.pos += 1
            return Assertion(char, self.flags.multiline, self.span(start, self.pos))
        self.pos += 1
        if char == ".":
            mask = ALL_BYTES if self.flags.dotall else ALL_BYTES & ~(1 << 10)
            return ByteClass(mask, self.span(start, self.pos))
        if char != "\\":
            return ByteClass(self.fold(mask_of(ord(char))), self.span(start, self.pos))
        if self.peek() in _ASSERTION_ESCAPES and self.peek():
            self.pos += 1
            return Assertion(self.text[start + 1], False, self.span(start, self.pos))
        self.pos = start
        mask, kind = self.escape(in_class=False)
        if kind != "unfolded":
            mask = self.fold(mask)
        return ByteClass(mask, self.span(start, self.pos))

    def group(self) -> RegexNode | None:
        """A group; None for a comment `(?#...)` or inline flags `(?i)`."""
        start = self.pos
        if self.text.startswith("(*", start):
            raise self.error("control verbs such as '(*UTF8)' are not supported (UTF-8 mode is "
                             "not part of the language)", start, width=2)
        saved = self.flags
        if self.text.startswith("(?#", start):
            end = self.text.find(")", start)
            if end < 0:
                raise self.error("unterminated comment '(?#': add ')'", start, width=3)
            self.pos = end + 1
            return None
        inline = _INLINE_FLAGS.match(self.text, start)
        named = _NAMED_GROUP.match(self.text, start)
        if inline:
            self.flags = self.flags.changed(inline.group(1), inline.group(2) or "")
            self.pos = inline.end()
            if inline.group(3) == ")":
                return None  # in force to the end of the enclosing group
        elif named:
            name = named.group(1) or named.group(2)
            if name in self.group_names:
                raise self.error(f"two named groups use the name '{name}'", start,
                                 width=named.end() - start, hint="rename one of them")
            self.group_names.add(name)
            self.pos = named.end()
        elif self.peek(1) == "?":
            self.refuse_group(start)
        else:
            self.pos += 1
        self.depth += 1
        if self.depth > MAX_GROUP_DEPTH:
            raise self.error(f"groups are nested more than {MAX_GROUP_DEPTH} deep", start)
        body = self.alternation(self.pos)
        self.depth -= 1
        self.flags = saved
        if self.peek() != ")":
            raise self.error("unclosed group: add ')'", start)
        self.pos += 1
        if isinstance(body, Empty):
            return Empty(self.span(start, self.pos))
        return body

    def refuse_group(self, start: int) -> None:
        for prefix, message, hint in _GROUP_REFUSALS:
            if self.text.startswith(prefix, start):
                raise self.error(message, start, width=len(prefix), hint=hint)
        if re.match(r"\(\?[-+]?\d", self.text[start:]):
            raise self.error("recursion '(?1)' is not supported", start, width=3)
        raise self.error("unknown group syntax '(?': write '(?:...)', a named group "
                         "'(?<name>...)' or inline flags from 'imsx', as in '(?i)'",
                         start, width=3)

    def quantified(self, item: RegexNode, bare_assertion: bool) -> RegexNode:
        self.skip_ignored()
        char = self.peek()
        if self.quoting or not char or char not in "*+?{":
            return item
        if char == "{" and not _QUANTIFIER.match(self.text, self.pos):
            return item  # a literal '{'
        start = self.pos
        if bare_assertion and isinstance(item, Assertion):
            raise self.error("an assertion cannot be repeated", start,
                             hint="drop the quantifier: an assertion matches no bytes")
        min_count, max_count = self.quantifier()
        if self.peek() == "?":
            self.pos += 1  # lazy: the same set of end offsets
        elif self.peek() == "+":
            raise self.error("possessive quantifiers are not supported (they need "
                             "backtracking): drop the '+'", start, width=self.pos - start + 1)
        self.skip_ignored()
        if not self.quoting and self.peek() and (
                self.peek() in "*+?" or _QUANTIFIER.match(self.text, self.pos)):
            raise self.error("a quantifier cannot follow another quantifier",
                             self.pos, hint="wrap the repeated part in (?:...) first")
        node = Repeat(item, min_count, max_count, item.location.through(self.span(start, self.pos)))
        if position_count(node) > MAX_POSITIONS:
            raise self.error(f"this repeat expands to more than {MAX_POSITIONS} byte positions",
                             start, width=self.pos - start, hint="use smaller repeat counts")
        return node

    def quantifier(self) -> tuple[int, int | None]:
        char = self.text[self.pos]
        if char != "{":
            self.pos += 1
            return {"*": (0, None), "+": (1, None), "?": (0, 1)}[char]
        start = self.pos
        match = _QUANTIFIER.match(self.text, start)
        self.pos = match.end()
        low, comma, high = match.groups()
        width = self.pos - start
        min_count = int(low)
        max_count = None if comma and not high else int(high) if comma else min_count
        if min_count > MAX_REPEAT or (max_count is not None and max_count > MAX_REPEAT):
            raise self.error(f"repeat counts are limited to {MAX_REPEAT}", start, width=width)
        if max_count is not None and min_count > max_count:
            raise self.error(f"repeat {{{min_count},{max_count}}} has its bounds out of order",
                             start, width=width)
        if max_count == 0:
            raise self.error(f"repeat '{match.group(0)}' matches its item zero times (Hyperscan "
                             "refuses it as an invalid repeat)", start, width=width,
                             hint="delete the repeated item together with its quantifier")
        return min_count, max_count
