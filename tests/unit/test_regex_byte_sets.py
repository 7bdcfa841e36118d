"""Named byte sets and escapes against Hyperscan, byte by byte over all 256 bytes:
every `\\p{..}` property (with `\\P`, `\\p{^..}`, inside classes), POSIX classes
(negated, caseless), and the escapes that name sets or bytes."""

from __future__ import annotations

import pytest

from parafuse.grammar.diagnostics import Location
from parafuse.grammar.regex_ast import ByteClass
from parafuse.grammar.regex_parser import parse_regex
from parafuse.grammar.regex_properties import POSIX_CLASSES, PROPERTIES
from tests.required_tools import require_module

hyperscan = require_module("hyperscan", module_level=True)


def boostfsm_bytes(regex: str, flags: str = "") -> set[int]:
    node = parse_regex(regex, flags, Location("t.fsm", 1, 1)).body
    assert isinstance(node, ByteClass), regex
    return {byte for byte in range(256) if node.byte_mask >> byte & 1}


def hyperscan_bytes(regexes: list[str], caseless: bool = False) -> list[set[int] | None]:
    """Per regex, the single bytes it matches; None where Hyperscan finds it can never match."""
    result: list[set[int] | None] = [set() for _ in regexes]
    compiled = []
    for index, regex in enumerate(regexes):
        try:
            hyperscan.Database().compile(expressions=[regex.encode("latin-1")])
            compiled.append(index)
        except hyperscan.error as error:
            assert "never match" in str(error), (regex, error)
            result[index] = None
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    flag = hyperscan.HS_FLAG_CASELESS if caseless else 0
    database.compile(expressions=[regexes[i].encode("latin-1") for i in compiled], ids=compiled,
                     elements=len(compiled), flags=[flag] * len(compiled))
    for byte in range(256):
        def on_match(pattern_id, start, end, match_flags, context, byte=byte):
            result[pattern_id].add(byte)
        database.scan(bytes([byte]), match_event_handler=on_match)
    return result


def assert_same_bytes(regexes: list[str], caseless: bool = False) -> None:
    expected = hyperscan_bytes(regexes, caseless)
    for regex, bytes_ in zip(regexes, expected, strict=True):
        got = boostfsm_bytes(regex, "i" if caseless else "")
        assert got == (bytes_ or set()), regex


def test_every_property_is_hyperscans_latin1_set() -> None:
    names = sorted(PROPERTIES)
    assert bin(PROPERTIES["L"]).count("1") == 117  # \pL, as the language contract says
    for caseless in (False, True):
        assert_same_bytes([rf"\p{{{name}}}" for name in names], caseless)
    assert_same_bytes([rf"\P{{{name}}}" for name in names])
    assert_same_bytes([rf"\p{{^{name}}}" for name in names])
    assert_same_bytes([rf"[\p{{{name}}}_]" for name in names], caseless=True)
    assert_same_bytes([rf"[^\P{{{name}}}]" for name in names])
    assert_same_bytes([rf"\p{letter}" for letter in "CLMNPSZ"] + [r"\PL", r"[\pN-]"])


def test_posix_classes_are_hyperscans() -> None:
    classes = [f"[[:{name}:]]" for name in sorted(POSIX_CLASSES)]
    negated = [f"[[:^{name}:]]" for name in sorted(POSIX_CLASSES)]
    outside = [f"[^[:{name}:]]" for name in sorted(POSIX_CLASSES)]
    for caseless in (False, True):
        assert_same_bytes(classes + negated + outside, caseless)


@pytest.mark.parametrize("caseless", [False, True])
def test_escapes_are_hyperscans(caseless: bool) -> None:
    assert_same_bytes([
        r"\d", r"\w", r"\s", r"\h", r"\v", r"\D", r"\W", r"\S", r"\H", r"\V", r"\C", ".",
        r"\a", r"\e", r"\f", r"\n", r"\r", r"\t", r"\x41", r"\x4", r"\x{e9}", r"\x{0}",
        r"\0", r"\07", r"\101", r"\377", r"\o{101}", r"\cA", r"\ca", r"\c[", r"\c?", r"\8",
        r"\i", r"\y", r"\T", r"[\b]", r"[\1]", r"[\d-]", r"[\w-z]", r"[\Q]\E]", r"[a-\x{7a}]",
        r"[^\d\s]", r"(?i:[a-c])", r"(?-i:[a-c])", r"[\xc0-\xc5]", r"\xe9", r"[\s\S]",
    ], caseless)


# `\Q...\E` inside a class, as Hyperscan reads it: the quoted bytes are literal (a quoted
# '-' makes no range, a quoted ']' does not close, a quoted '^' does not negate), a quoted
# byte may still start or end a range, and an empty `\Q\E` or a lone `\E` is ignored
# anywhere, even between a range's ends or before the '^' that negates.
QUOTED_CLASSES = [
    r"[\Qa-c\E]", r"[x\Q-\Ey]", r"[\Q]\E]", r"[^\Q^\E]", r"[a\Q\E-c]", r"[a\Q\E-\Q\Ec]",
    r"[a-\Q\Ec]", r"[\Q\Ea-c]", r"[\Q^\Ea]", r"[a\Q-\Ec]", r"[a-\Qc\E]", r"[\Qa\E-c]",
    r"[\Q\E]a]", r"[\Q\E^a]", r"[^\Q\E]a]", r"[^\Q\E^a]", r"[\Q\E\Q\E^a]", r"[\E^a]",
    r"[\Q\E^\Q\E]a]", r"[\Q\\\E]", r"[\Q\d\E]", r"[a\Q\E]", r"[a-\Q\E]", r"[\E]a]",
    r"[a\E-c]", r"[a-\Ec]", r"[\Q-\Ea]", r"[a\Q-\E]", r"[\Q[:alpha:]\E]", r"[\Qz-a\E]",
    r"[\Q\E\Qa\E-c]", r"[\Qa\E\Q\E-c]", r"[a-\Q\E\Qc\E]", r"[\Q-\E-a]", r"[!-\Q-\E]",
    r"[!--]", r"[--a]", r"[\d--a]", r"[a-c-e]", r"[\x61\Q\E-c]", r"[\Qab\E-d]",
    r"[a\Q\E\E-c]", r"[[.a]", r"[x[:]", r"[\Q\E-a]", r"[a\Q\E-]",
]


@pytest.mark.parametrize("caseless", [False, True])
def test_quoting_inside_classes_is_hyperscans(caseless: bool) -> None:
    assert_same_bytes(QUOTED_CLASSES, caseless)
