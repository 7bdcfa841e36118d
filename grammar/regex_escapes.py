"""Byte sets, escapes and class items of the regex subset (docs/fsm-language.md section 4).

`EscapeParser` holds the cursor shared with `regex_parser.py`: the text, the
position, and how an offset in the regex becomes a `Location`.
"""

from __future__ import annotations

from .diagnostics import CompileError, Location
from .regex_ast import ALL_BYTES

_UPPER_SHIFT, _LOWER_SHIFT, _LETTERS = 65, 97, (1 << 26) - 1


def mask_of(byte: int) -> int:
    return 1 << byte


def mask_of_range(low: int, high: int) -> int:
    return ((1 << (high + 1)) - 1) & ~((1 << low) - 1)


def fold_case(mask: int) -> int:
    """Add the other ASCII case of every letter in `mask`."""
    letters = ((mask >> _UPPER_SHIFT) | (mask >> _LOWER_SHIFT)) & _LETTERS
    return mask | (letters << _UPPER_SHIFT) | (letters << _LOWER_SHIFT)


DIGITS = mask_of_range(0x30, 0x39)
WORD = DIGITS | mask_of_range(0x41, 0x5A) | mask_of_range(0x61, 0x7A) | mask_of(0x5F)
SPACE = mask_of_range(0x09, 0x0D) | mask_of(0x20)
SHORTHANDS = {
    "d": DIGITS, "w": WORD, "s": SPACE,
    "D": ALL_BYTES & ~DIGITS, "W": ALL_BYTES & ~WORD, "S": ALL_BYTES & ~SPACE,
}
CONTROL_ESCAPES = {"n": 0x0A, "r": 0x0D, "t": 0x09, "f": 0x0C}
_HEX_DIGITS = "0123456789abcdefABCDEF"


def _refusal(letter: str, in_class: bool) -> tuple[str, str | None]:
    """Why `\\letter` is refused, and a hint."""
    if letter in "123456789kg":
        return f"a DFA cannot express backreferences ('\\{letter}')", None
    if letter in "bB" and not in_class:
        return (f"a DFA reporting end offsets cannot express word boundaries ('\\{letter}')",
                "match the neighbouring bytes explicitly, e.g. [^A-Za-z0-9_]")
    if letter in "AzZG":
        return (f"a DFA reporting end offsets cannot express the anchor '\\{letter}'",
                "use '^' at the start of an alternative for offset 0")
    if letter in "pPX":
        return (f"Unicode properties ('\\{letter}') are not supported: regexes match bytes",
                "spell the bytes out as a class, e.g. [A-Za-z]")
    if letter == "0":
        return "the escape '\\0' is not supported", "write \\x00"
    return (f"unknown escape '\\{letter}'",
            "supported: \\n \\r \\t \\f \\xHH \\d \\w \\s \\D \\W \\S and escaped punctuation")


class EscapeParser:
    """Cursor over the regex text, with escapes and class items."""

    def __init__(self, text: str, location: Location) -> None:
        self.text = text
        self.pos = 0
        self.location = location

    def peek(self, ahead: int = 0) -> str:
        index = self.pos + ahead
        return self.text[index] if index < len(self.text) else ""

    def span(self, start: int, end: int) -> Location:
        return self.location.shifted(start, max(1, end - start))

    def error(self, message: str, offset: int, width: int = 1,
              hint: str | None = None) -> CompileError:
        return CompileError(message, self.span(offset, offset + width), hint=hint)

    def escape(self, in_class: bool) -> tuple[int, bool]:
        """Parse `\\X` at the cursor: (byte mask, whether it is a shorthand like \\d)."""
        start = self.pos
        letter = self.peek(1)
        self.pos += 2
        if not letter:
            raise self.error("trailing backslash: write '\\\\' for a literal backslash", start)
        if letter in SHORTHANDS:
            return SHORTHANDS[letter], True
        if letter in CONTROL_ESCAPES:
            return mask_of(CONTROL_ESCAPES[letter]), False
        if letter == "x":
            return mask_of(self.hex_byte(start)), False
        if letter == "b" and in_class:
            return mask_of(0x08), False
        if letter.isascii() and letter.isalnum():
            message, hint = _refusal(letter, in_class)
            raise self.error(message, start, width=2, hint=hint)
        return mask_of(ord(letter)), False

    def hex_byte(self, start: int) -> int:
        digits = self.text[self.pos:self.pos + 2]
        if len(digits) < 2 or any(d not in _HEX_DIGITS for d in digits):
            raise self.error("'\\x' needs exactly two hex digits, as in \\x41", start,
                             width=2 + len(digits))
        self.pos += 2
        return int(digits, 16)

    def class_element(self) -> tuple[int, bool, int]:
        """One byte or shorthand inside `[...]`: (mask, is shorthand, start offset)."""
        start = self.pos
        if self.peek() == "\\":
            mask, shorthand = self.escape(in_class=True)
            return mask, shorthand, start
        self.pos += 1
        return mask_of(ord(self.text[start])), False, start

    def class_item(self) -> int:
        """A class element or a range `a-z`; a '-' first or last is literal."""
        low_mask, low_shorthand, start = self.class_element()
        if self.peek() != "-" or self.peek(1) in ("]", ""):
            return low_mask
        self.pos += 1
        high_mask, high_shorthand, high_start = self.class_element()
        if low_shorthand or high_shorthand:
            where = start if low_shorthand else high_start
            raise self.error("a class shorthand such as '\\d' cannot be a range end", where,
                             width=2, hint="put '-' first or last to mean a literal '-'")
        low, high = low_mask.bit_length() - 1, high_mask.bit_length() - 1
        if low > high:
            raise self.error(f"range out of order: {_show(low)} is after {_show(high)}",
                             start, width=self.pos - start)
        return mask_of_range(low, high)


def _show(byte: int) -> str:
    char = chr(byte)
    return f"'{char}'" if char.isprintable() and byte < 0x7F else f"\\x{byte:02x}"
