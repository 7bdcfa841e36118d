"""Byte sets, escapes and class items of the regex syntax (docs/fsm-language.md section 4).

`EscapeParser` holds the cursor shared with `regex_parser.py`: the text, the
position, and how an offset in the regex becomes a `Location` (a regex in extended
mode may span lines). Every escape means what it means to Hyperscan without its
UTF-8 flag; the ones Hyperscan refuses are located errors saying what to write.
"""

from __future__ import annotations

import bisect
import re

from .diagnostics import CompileError, Location
from .regex_ast import ALL_BYTES
from .regex_properties import PROPERTIES, SINGLE_LETTER_PROPERTIES

_UPPER_SHIFT, _LOWER_SHIFT, _LETTERS = 65, 97, (1 << 26) - 1


def mask_of(byte: int) -> int:
    return 1 << byte


def mask_of_range(low: int, high: int) -> int:
    return ((1 << (high + 1)) - 1) & ~((1 << low) - 1)


def fold_case(mask: int) -> int:
    """Add the other ASCII case of every letter in `mask`."""
    letters = ((mask >> _UPPER_SHIFT) | (mask >> _LOWER_SHIFT)) & _LETTERS
    return mask | (letters << _UPPER_SHIFT) | (letters << _LOWER_SHIFT)


def _set(*bytes_: int) -> int:
    return sum(1 << byte for byte in bytes_)


DIGITS = mask_of_range(0x30, 0x39)
WORD = DIGITS | mask_of_range(0x41, 0x5A) | mask_of_range(0x61, 0x7A) | mask_of(0x5F)
SPACE = mask_of_range(0x09, 0x0D) | mask_of(0x20)
VERTICAL = mask_of_range(0x0A, 0x0D) | mask_of(0x85)
HORIZONTAL = _set(0x09, 0x20, 0xA0)
SHORTHANDS = {
    "d": DIGITS, "w": WORD, "s": SPACE, "v": VERTICAL, "h": HORIZONTAL,
    "D": ALL_BYTES & ~DIGITS, "W": ALL_BYTES & ~WORD, "S": ALL_BYTES & ~SPACE,
    "V": ALL_BYTES & ~VERTICAL, "H": ALL_BYTES & ~HORIZONTAL,
}
CONTROL_ESCAPES = {"n": 0x0A, "r": 0x0D, "t": 0x09, "f": 0x0C, "a": 0x07, "e": 0x1B}
LITERAL_LETTERS = "ijmqyFIJMOTY"  # unknown letters Hyperscan takes literally (outside classes)
_UNSUPPORTED = {
    "l": "case-changing escapes ('\\l') are not supported",
    "L": "case-changing escapes ('\\L') are not supported",
    "u": "'\\u' is not supported: regexes match bytes; write \\xHH",
    "U": "case-changing escapes ('\\U') are not supported",
    "N": "'\\N' is not supported: write [^\\n]",
    "R": "'\\R' is not supported: write (?:\\r\\n|[\\n\\x0b\\f\\r\\x85])",
    "X": "'\\X' (extended grapheme cluster) is not supported: regexes match bytes",
    "K": "'\\K' (reset match start) is not supported: matches have no start here",
    "G": "'\\G' is not supported: write \\A for the start of the input",
}
BACKREFERENCE_HINT = "spell the alternatives out, e.g. (?:aa|bb) for (a|b)\\1"
_HEX = re.compile(r"[0-9a-fA-F]{0,2}")
_BRACED = re.compile(r"\{([^}]*)\}")
_DECIMAL = re.compile(r"[0-9]+")


class EscapeParser:
    """Cursor over the regex text, with escapes and class items."""

    def __init__(self, text: str, location: Location) -> None:
        self.text = text
        self.pos = 0
        self.location = location
        self.group_count = len(re.findall(r"(?<!\\)\((?:\?P?<[A-Za-z_]|\?'|(?!\?))", text))
        self.newlines = [offset for offset, char in enumerate(text) if char == "\n"]

    def peek(self, ahead: int = 0) -> str:
        index = self.pos + ahead
        return self.text[index] if index < len(self.text) else ""

    def _line_col(self, offset: int) -> tuple[int, int]:
        """(line, column) of `offset`: a binary search in the newlines' offsets
        (counting them on every call would be quadratic in a long regex)."""
        newlines = bisect.bisect_left(self.newlines, offset)
        if not newlines:
            return self.location.line, self.location.column + offset
        return self.location.line + newlines, offset - self.newlines[newlines - 1]

    def span(self, start: int, end: int) -> Location:
        line, column = self._line_col(start)
        end_line, end_column = self._line_col(max(end, start + 1))
        return Location(self.location.file, line, column, end_line, end_column,
                        self.location.source)

    def error(self, message: str, offset: int, width: int = 1,
              hint: str | None = None) -> CompileError:
        return CompileError(message, self.span(offset, offset + width), hint=hint)

    def escape(self, in_class: bool) -> tuple[int, str]:
        """Parse `\\X` at the cursor: (byte mask, kind); kind is 'byte', 'set' or 'unfolded'
        (a property such as \\p{Lu}: the `i` flag does not fold it, as in Hyperscan)."""
        start = self.pos
        letter = self.peek(1)
        self.pos += 2
        if not letter:
            raise self.error("trailing backslash: write '\\\\' for a literal backslash", start)
        if letter in SHORTHANDS:
            return SHORTHANDS[letter], "set"
        if letter in CONTROL_ESCAPES:
            return mask_of(CONTROL_ESCAPES[letter]), "byte"
        if letter == "x":
            return mask_of(self.hex_byte(start)), "byte"
        if letter == "o":
            return mask_of(self.braced_octal(start)), "byte"
        if letter == "c":
            return mask_of(self.control_byte(start)), "byte"
        if letter.isdigit():
            return mask_of(self.numbered(start, in_class)), "byte"
        if letter in "pP":
            return self.property(start, negated=letter == "P"), "unfolded"
        if letter == "b" and in_class:
            return mask_of(0x08), "byte"
        if letter == "C" and not in_class:
            return ALL_BYTES, "set"
        if letter in LITERAL_LETTERS and not in_class:
            return mask_of(ord(letter)), "byte"
        if letter.isascii() and letter.isalnum():
            raise self.letter_error(letter, start, in_class)
        return mask_of(ord(letter)), "byte"

    def letter_error(self, letter: str, start: int, in_class: bool) -> CompileError:
        if letter in "gk":
            return self.error(f"backreferences ('\\{letter}') are not supported: a DFA cannot "
                              "express them", start, width=2, hint=BACKREFERENCE_HINT)
        if letter in _UNSUPPORTED:
            return self.error(_UNSUPPORTED[letter], start, width=2)
        if in_class:
            return self.error(f"'\\{letter}' is not supported inside a class", start, width=2,
                              hint="write the byte itself, or \\xHH")
        return self.error(f"unknown escape '\\{letter}'", start, width=2)

    def hex_byte(self, start: int) -> int:
        """`\\xHH` (0 to 2 hex digits) or `\\x{H...}`."""
        braced = _BRACED.match(self.text, self.pos)
        if braced:
            digits = braced.group(1)
            self.pos = braced.end()
            if not digits or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise self.error("'\\x{...}' needs hex digits, as in \\x{41}", start,
                                 width=self.pos - start)
            value = int(digits, 16)
            if value > 0xFF:
                raise self.error("'\\x{...}' is a byte: at most \\x{ff} (UTF-8 mode is not "
                                 "supported)", start, width=self.pos - start)
            return value
        digits = _HEX.match(self.text, self.pos).group(0)
        self.pos += len(digits)
        return int(digits, 16) if digits else 0

    def braced_octal(self, start: int) -> int:
        braced = _BRACED.match(self.text, self.pos)
        if not braced or not braced.group(1) or any(d not in "01234567" for d in braced.group(1)):
            raise self.error("'\\o' needs octal digits in braces, as in \\o{101}", start, width=2)
        self.pos = braced.end()
        value = int(braced.group(1), 8)
        if value > 0o377:
            raise self.error("'\\o{...}' is a byte: at most \\o{377}", start,
                             width=self.pos - start)
        return value

    def control_byte(self, start: int) -> int:
        char = self.peek()
        if not char or not char.isascii():
            raise self.error("'\\c' must be followed by an ASCII character, as in \\cA", start,
                             width=2)
        self.pos += 1
        return ord(char.upper()) ^ 0x40

    def numbered(self, start: int, in_class: bool) -> int:
        """`\\0oo` octal; `\\1`..`\\9...`: a backreference (refused) or octal, as in PCRE."""
        digits = _DECIMAL.match(self.text, start + 1).group(0)
        number = int(digits)
        backreference = not in_class and digits[0] != "0" and (
            number < 10 or number <= self.group_count)
        if backreference and digits[0] not in "89":
            raise self.error(f"backreferences ('\\{digits}') are not supported: a DFA cannot "
                             "express them", start, width=1 + len(digits),
                             hint=BACKREFERENCE_HINT)
        octal = re.compile(r"[0-7]{1,3}").match(self.text, start + 1)
        if octal is None:  # \8, \9: the digit itself
            return ord(self.text[start + 1])
        self.pos = octal.end()
        value = int(octal.group(0), 8)
        if value > 0o377:
            raise self.error("octal escapes are bytes: at most \\377", start,
                             width=self.pos - start)
        return value

    def property(self, start: int, negated: bool) -> int:
        """`\\pL`, `\\p{Lu}`, `\\p{^Lu}`, `\\P{..}` as a Latin-1 byte set."""
        if self.peek() == "{":
            close = self.text.find("}", self.pos)
            if close < 0:
                raise self.error("malformed property: write \\p{Name}", start, width=2)
            name = self.text[self.pos + 1:close]
            self.pos = close + 1
            if name.startswith("^"):
                negated, name = not negated, name[1:]
        else:
            name = self.peek()
            if not name:
                raise self.error("malformed property: write \\p{Name} or \\pL", start, width=2)
            self.pos += 1
            if name not in SINGLE_LETTER_PROPERTIES:
                raise self.error(f"unknown property '{name}'", start, width=3)
        if name not in PROPERTIES:
            raise self.error(f"unknown property '{name}'", start, width=self.pos - start,
                             hint="general categories (L, Lu, Nd, ...), scripts (Latin, "
                                  "Common, ...), Any, L&, Xan, Xps, Xsp, Xwd")
        mask = PROPERTIES[name]
        return ALL_BYTES & ~mask if negated else mask
