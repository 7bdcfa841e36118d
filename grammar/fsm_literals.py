"""Contents of `.fsm` literals: quoted bytes, hex bytes and `/regex/flags` tokens.

The grammar lexes these leniently (an unclosed quote still makes a token) so that
every problem is reported here, at its column, in words.
"""

from __future__ import annotations

from .diagnostics import CompileError, Location

_CHAR_ESCAPES = {"n": 0x0A, "r": 0x0D, "t": 0x09, "0": 0x00, "\\": 0x5C, "'": 0x27}
_HEX = "0123456789abcdefABCDEF"
REGEX_FLAGS = "imsx"


def parse_byte_literal(token: str, location: Location) -> int:
    """The byte value of `'a'`, `'\\n'`, `'\\x41'` or `0x41`."""
    if token[:2].lower() == "0x":
        return _parse_hex(token, location)
    if not is_closed_quote(token):
        raise CompileError("unterminated byte literal: add the closing quote", location)
    body = token[1:-1]
    if not body:
        raise CompileError("empty byte literal: a quoted byte holds exactly one byte", location)
    if body[0] != "\\":
        if len(body) != 1:
            raise CompileError(f"a quoted byte holds exactly one byte, not {len(body)}; use a "
                               "range 'a'..'z' or a union ['a', 'b'] for several", location)
        return ord(body)
    return _parse_escape(body, location)


def is_closed_quote(token: str) -> bool:
    index = 1
    while index < len(token):
        if token[index] == "\\":
            index += 2
        elif token[index] == "'":
            return index == len(token) - 1
        else:
            index += 1
    return False


def _parse_escape(body: str, location: Location) -> int:
    letter = body[1:2]
    if letter == "x":
        digits = body[2:]
        if len(digits) != 2 or any(d not in _HEX for d in digits):
            raise CompileError("'\\x' needs exactly two hex digits, as in '\\x41'",
                               location.shifted(1, len(body)))
        return int(digits, 16)
    if letter in _CHAR_ESCAPES and len(body) == 2:
        return _CHAR_ESCAPES[letter]
    if letter in _CHAR_ESCAPES:
        raise CompileError("a quoted byte holds exactly one byte", location)
    raise CompileError(f"unknown escape '\\{letter}' in a quoted byte",
                       location.shifted(1, 2),
                       hint="supported: \\n \\r \\t \\0 \\\\ \\' \\xHH")


def _parse_hex(token: str, location: Location) -> int:
    digits = token[2:]
    if not digits or any(d not in _HEX for d in digits):
        raise CompileError(f"malformed hex byte '{token}': write 0x followed by hex digits",
                           location)
    value = int(digits, 16)
    if value > 0xFF:
        raise CompileError(f"{token} is not a byte: byte values go from 0x00 to 0xff", location)
    return value


def split_regex_literal(token: str, location: Location) -> tuple[str, str]:
    """Split `/body/flags` into body and flags, checking the closing slash and flags."""
    closing = closing_slash(token)
    if closing is None:
        raise CompileError("unterminated regex: add the closing '/' (write '\\/' for a "
                           "slash inside the regex)", location.shifted(0, 1))
    body, flags = token[1:closing], token[closing + 1:]
    seen: set[str] = set()
    for index, flag in enumerate(flags):
        where = offset_location(token, location, closing + 1 + index)
        if flag not in REGEX_FLAGS:
            raise CompileError(f"unknown regex flag '{flag}'", where,
                               hint="the flags are 'i' (ignore ASCII case), 's' ('.' matches "
                                    "newline too), 'm' (^ and $ at every line) and 'x' "
                                    "(extended: whitespace and # comments ignored)")
        if flag in seen:
            raise CompileError(f"regex flag '{flag}' given twice", where)
        seen.add(flag)
    return body, flags


def offset_location(text: str, location: Location, offset: int, width: int = 1) -> Location:
    """The location of `text[offset]`, where `text` (which may span lines) starts at `location`."""
    newlines = text.count("\n", 0, offset)
    if not newlines:
        return location.shifted(offset, width)
    column = offset - text.rfind("\n", 0, offset)
    return Location(location.file, location.line + newlines, column, location.line + newlines,
                    column + width, location.source)


def closing_slash(token: str) -> int | None:
    """Index of the first unescaped '/' after the opening one, if any."""
    index = 1
    while index < len(token):
        if token[index] == "\\":
            index += 2
            continue
        if token[index] == "/":
            return index
        index += 1
    return None
