"""Translate Lark's parse exceptions into located errors in words.

Lark reports "Unexpected token Token('RBRACE', '}') ... Expected one of: * LPAR * NAME";
users should read "expected an expression after '=', found '}'". Each grammar
passes a `Vocabulary`: words for its regex terminals, and which terminals can
start an expression (so that a set of them reads as "an expression").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lark import Lark
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.lexer import PatternStr

from .diagnostics import CompileError, Location, SourceFile, location_of_offsets


@dataclass(frozen=True)
class Vocabulary:
    words: dict[str, str]  # terminal name -> phrase ("a name", "a number")
    # (terminals, phrase, how many must be expected): "an expression" instead of a list
    phrases: tuple[tuple[frozenset[str], str, int], ...] = ()
    hidden: frozenset[str] = field(default_factory=frozenset)  # never listed
    comment_prefix: str | None = "#"  # skipped when finding the token before an error


_PREVIOUS_TOKEN = re.compile(
    r"('(?:[^'\\\n]|\\.)*'|[A-Za-z_][A-Za-z0-9_]*|\d[\w.]*|\S)\s*$")  # quoted literals whole


def _previous_token(text: str, offset: int, comment: str | None) -> str | None:
    """The token just before `offset`, skipping whitespace and comments."""
    lines = text[:offset].split("\n")
    if comment:
        lines = [line.split(comment, 1)[0] for line in lines]
    match = _PREVIOUS_TOKEN.search("\n".join(lines).rstrip())
    return match.group(1) if match else None


def _quoted(token: str) -> str:
    return token if token.startswith("'") else f"'{token}'"


def _describe(name: str, parser: Lark, vocab: Vocabulary) -> str | None:
    if name in vocab.hidden or name == "$END":
        return None if name != "$END" else "the end of the file"
    if name in vocab.words:
        return vocab.words[name]
    term = next((t for t in parser.terminals if t.name == name), None)
    if term is not None and isinstance(term.pattern, PatternStr):
        return f"'{term.pattern.value}'"
    return name.lower().replace("_", " ")


def describe_expected(expected: set[str], parser: Lark, vocab: Vocabulary) -> str:
    names = set(expected)
    phrases: list[str] = []
    for group, phrase, needed in vocab.phrases:
        if len(names & group) >= needed:
            phrases.append(phrase)
            names -= group
    for name in sorted(names):
        phrase = _describe(name, parser, vocab)
        if phrase and phrase not in phrases:
            phrases.append(phrase)
    if not phrases:
        return "something else"
    if len(phrases) > 5:
        phrases = phrases[:5] + ["..."]
    return phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " or " + phrases[-1]


def _found(token_value: str) -> str:
    shown = token_value if len(token_value) <= 20 else token_value[:17] + "..."
    return f"'{shown}'"


def translate(
    exc: UnexpectedInput, source: SourceFile, parser: Lark, vocab: Vocabulary
) -> CompileError:
    """Turn a Lark exception into a CompileError located at the offending token."""
    text = source.text
    if isinstance(exc, UnexpectedCharacters):
        pos = exc.pos_in_stream
        loc = location_of_offsets(source, pos, pos + 1)
        char = text[pos] if pos < len(text) else ""
        if char == "\ufffd":  # how cli/errors.py read_source reads a byte that is not UTF-8
            return CompileError("unexpected byte (not UTF-8 text)", loc)
        shown = repr(char)[1:-1] if char.isprintable() else f"\\x{ord(char):02x}"
        return CompileError(f"unexpected character '{shown}'", loc)
    if isinstance(exc, UnexpectedEOF) or (
        isinstance(exc, UnexpectedToken) and exc.token.type == "$END"
    ):
        expected = describe_expected(set(exc.expected), parser, vocab)
        end = len(text.rstrip())
        prev = _previous_token(text, end, vocab.comment_prefix)
        after = f" after {_quoted(prev)}" if prev else ""
        loc = location_of_offsets(source, max(0, end - 1), max(1, end))
        return CompileError(f"unexpected end of file: expected {expected}{after}", loc)
    assert isinstance(exc, UnexpectedToken)
    token = exc.token
    start = token.start_pos if token.start_pos is not None else 0
    end = token.end_pos if token.end_pos is not None else start + 1
    loc = location_of_offsets(source, start, end)
    prev = _previous_token(text, start, vocab.comment_prefix)
    after = f" after {_quoted(prev)}" if prev else ""
    expected = describe_expected(set(exc.expected), parser, vocab)
    return CompileError(f"expected {expected}{after}, found {_found(str(token))}", loc)


def parse_or_raise(parser: Lark, source: SourceFile, vocab: Vocabulary):
    """Parse `source` with `parser`; any syntax error becomes one CompileError."""
    try:
        return parser.parse(source.text)
    except UnexpectedInput as exc:
        raise translate(exc, source, parser, vocab) from None


def token_location(source: SourceFile, token) -> Location:
    return location_of_offsets(source, token.start_pos, token.end_pos)
