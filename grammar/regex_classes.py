"""Classes `[...]` of the regex syntax (docs/fsm-language.md section 4), as Hyperscan
reads them: ranges, escapes and sets, POSIX classes, and `\\Q...\\E` quoting inside.

`ClassParser` is the part of grammar/regex_parser.py's parser that reads a class; the
parser sets `quoting` (inside `\\Q...\\E`) and `flags` (for case folding).
"""

from __future__ import annotations

import re

from .regex_ast import ALL_BYTES
from .regex_escapes import EscapeParser, fold_case, mask_of, mask_of_range
from .regex_properties import POSIX_CLASSES

# What Hyperscan reads as a POSIX class or collating element: '[:' (or '[.', '[=') up to
# the first ':]' before an unescaped ']', whatever lies between ('[:a-b:]' is refused).
POSIX_ITEM = re.compile(r"\[:((?:\\\]|[^\]])*):\]")
_POSIX_NAME = re.compile(r"(\^?)([a-z]+)")
COLLATING_ITEM = re.compile(r"\[([.=])(?:\\\]|[^\]])*\1\]")


class ClassParser(EscapeParser):
    """Reads `[...]` at the cursor into a byte mask."""

    quoting: bool
    flags: object  # the parser's Flags: `caseless` folds the class

    def fold(self, mask: int) -> int:
        return fold_case(mask) if self.flags.caseless else mask

    def byte_class(self) -> int:
        """`[...]` as Hyperscan reads it: `\\Q...\\E` quotes bytes (a quoted '-', ']', '^' or
        '\\' is that byte; a quoted byte may still start or end a range), a lone `\\E` is
        ignored, and so is an empty `\\Q\\E` anywhere (`[a\\Q\\E-c]` is `[a-c]`,
        `[\\Q\\E^a]` is `[^a]`, `[\\Q\\E]a]` holds ']')."""
        start = self.pos
        self.pos += 1
        items = _ClassItems(self)
        early = True  # nothing real yet: '^' negates, ']' is literal
        while True:
            if self.quoting:
                if self.text.startswith("\\E", self.pos):
                    self.quoting = False
                    self.pos += 2
                elif self.pos < len(self.text):
                    self.pos += 1
                    items.add_byte(ord(self.text[self.pos - 1]), self.pos - 1)
                    early = False
                else:
                    raise self.error("unclosed class: add ']'", start,
                                     hint="between \\Q and \\E even ']' is a literal byte: end "
                                          "the quote with \\E before the ']'")
                continue
            char = self.peek()
            if not char:
                raise self.error("unclosed class: add ']'", start)
            if self.text.startswith(("\\Q", "\\E"), self.pos):
                self.quoting = self.peek(1) == "Q"
                self.pos += 2
                continue
            if early and char == "^" and not items.negated:
                items.negated = True
                self.pos += 1
                continue
            if early and char == "]":
                self.pos += 1
                items.add_byte(ord("]"), self.pos - 1)
                early = False
                continue
            early = False
            if char == "]":
                break
            if char == "-":
                self.pos += 1
                items.add_dash(self.pos - 1)
                continue
            element_start = self.pos
            mask, kind = self.class_element()
            if kind == "byte":
                items.add_byte(mask.bit_length() - 1, element_start)
            else:
                items.add_set(mask, kind, element_start)
        self.pos += 1
        return items.finish()

    def class_element(self) -> tuple[int, str]:
        """One byte, escape or POSIX class inside `[...]`: (mask, kind)."""
        start = self.pos
        posix = POSIX_ITEM.match(self.text, start)
        if posix:
            named = _POSIX_NAME.fullmatch(posix.group(1))
            if named is None or named.group(2) not in POSIX_CLASSES:
                raise self.error(f"unknown POSIX class '[:{posix.group(1)}:]'", start,
                                 width=posix.end() - start,
                                 hint="known: " + " ".join(sorted(POSIX_CLASSES)))
            self.pos = posix.end()
            mask = POSIX_CLASSES[named.group(2)]
            if named.group(1):  # negated after case folding, as in Hyperscan
                return ALL_BYTES & ~self.fold(mask), "unfolded"
            return mask, "set"
        if COLLATING_ITEM.match(self.text, start):
            raise self.error("POSIX collating elements such as '[.a.]' are not supported",
                             start, width=2)
        if self.peek() == "\\":
            return self.escape(in_class=True)
        self.pos += 1
        return mask_of(ord(self.text[start])), "byte"


class _ClassItems:
    """The bytes of a class so far, with Hyperscan's range rule: a byte followed by an
    unquoted '-' and another byte is a range; a '-' with no byte before it (first, after a
    set such as \\d or after a range) or none after it (last) is literal; a set such as \\d
    cannot end a range."""

    def __init__(self, parser: ClassParser) -> None:
        self.parser = parser
        self.negated = False
        self.folded = 0
        self.unfolded = 0
        self.range_start: tuple[int, int] | None = None  # (byte, offset) that may start a range
        self.in_range = False  # a '-' followed range_start

    def add_byte(self, byte: int, offset: int) -> None:
        if self.in_range:
            low, low_offset = self.range_start
            if low > byte:
                raise self.parser.error(f"range out of order: {_show(low)} is after "
                                        f"{_show(byte)}", low_offset,
                                        width=self.parser.pos - low_offset)
            self.folded |= mask_of_range(low, byte)
            self.in_range, self.range_start = False, None
            return
        self.folded |= mask_of(byte)
        self.range_start = (byte, offset)

    def add_dash(self, offset: int) -> None:
        if self.in_range:  # 'a--': the range a..'-'
            self.add_byte(ord("-"), offset)
        elif self.range_start is not None:
            self.in_range = True
        else:
            self.add_byte(ord("-"), offset)

    def add_set(self, mask: int, kind: str, offset: int) -> None:
        if self.in_range:
            raise self.parser.error("a set such as '\\d' cannot end a range", offset,
                                    width=self.parser.pos - offset,
                                    hint="put '-' first or last to mean a literal '-'")
        if kind == "unfolded":
            self.unfolded |= mask
        else:
            self.folded |= mask
        self.range_start = None

    def finish(self) -> int:
        if self.in_range:  # 'a-]': the '-' is literal
            self.folded |= mask_of(ord("-"))
        mask = self.parser.fold(self.folded) | self.unfolded
        return ALL_BYTES & ~mask if self.negated else mask


def _show(byte: int) -> str:
    char = chr(byte)
    return f"'{char}'" if char.isprintable() and byte < 0x7F else f"\\x{byte:02x}"
