"""Prefiltered engines (fsm_compiler/engines/prefilter_engine.py): the required factors of a regex,
and generated sets whose patterns have literal factors (overlapping literals, literals
case-insensitive, inside counted repeats, next to assertions, with unbounded tails)
over haystacks full of those literals, so that factors and matches fall on and around
every chunk boundary: the reference equals Hyperscan, and every C++ scheme at 1-3
threads and many chunkings (which split the confirmation into many jobs) equals the
reference."""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from parafuse.fsm_compiler.automata.nfa import build_position_automaton
from parafuse.fsm_compiler.engines.engines import EngineSet, engine_kind
from parafuse.fsm_compiler.engines.prefilter_engine import (
    ConfirmedPattern,
    prefilterable,
    start_ranges,
)
from parafuse.fsm_compiler.engines.required_literals import Factors, longest, required_factors
from parafuse.grammar.diagnostics import SourceFile
from parafuse.grammar.fsm_parser import parse_fsm
from parafuse.grammar.regex_ast import ALL_BYTES
from tests.property.fsm_engine_set_checks import assert_engine_set_equal_reference
from tests.property.fsm_regex_strategies import hyperscan_matches, hyperscan_refusal
from tests.property.test_fsm_engine_sets import compile_set
from tests.required_tools import require_cxx, require_module


def factor_text(string) -> str:
    """A factor (byte sets) as text: each set's highest byte."""
    return "".join(chr(max(b for b in range(256) if mask >> b & 1)) for mask in string)


def parsed(regex: str, flags: str = ""):
    source = f"patterns p {{\n    t /{regex}/{flags}\n}}\n"
    return parse_fsm(SourceFile("p.fsm", source)).machines[0].patterns[0].regex


def factor_texts(regex: str, flags: str = "") -> tuple[list[str], int | None] | None:
    """The factors as text (a case pair as its lower-case letter) and the reach."""
    found = required_factors(parsed(regex, flags))
    if found is None:
        return None
    texts = ["".join(chr(max(b for b in range(256) if mask >> b & 1)) for mask in factor)
             for factor in found.factors]
    return texts, found.reach


def test_required_factors_of_typical_rules() -> None:
    assert factor_texts("ghp_[0-9a-zA-Z]{36}") == (["ghp_"], 4)
    assert factor_texts(r"\bAKIA[0-9A-Z]{16}\b") == (["AKIA"], 4)
    assert factor_texts("(?:XQZW|WQZX)[0-9]+") == (["WQZX", "XQZW"], 4)
    assert factor_texts("secret_key", "i") == (["secret_key"], 10)  # case pairs
    assert factor_texts("[a-z]{0,5}=XQZW") == (["=XQZW"], 10)  # reach counts what precedes
    assert factor_texts("(?:AB-CD){2,3}") == (["AB-CDAB-CD", "AB-CDAB-CDAB-CD"], 15)  # repeat
    assert factor_texts("(?:XQZW)?[a-z]+") is None  # optional: not required
    assert factor_texts("[a-z]+XQZW") == (["XQZW"], None)  # a run starts after a non-letter
    assert factor_texts("(?s).*XQZW") is None  # neither reach nor bytes bound the start
    assert factor_texts("ea") is None  # two common letters: not selective enough
    assert factor_texts("XQZW|[0-9]+") is None  # one alternative without a factor


def test_patterns_that_start_at_offset_zero_are_not_prefiltered() -> None:
    """A leading `^` (not multi-line) or `\\A` in every branch: every match starts at 0,
    so a factor found later is confirmed for nothing; the pattern joins a DFA engine
    instead (and an NFA engine stops once its threads die)."""
    starts = {regex + flags: build_position_automaton([(0, parsed(regex, flags))])
              .starts_at_zero_only
              for regex, flags in [("^MID\\d+ Mozilla", ""), ("\\Akey|^secret", ""),
                                   ("^MID\\d+ Mozilla", "m"), ("^key|secret", ""),
                                   ("(?:^|x)Mozilla", ""), ("Mozilla", "")]}
    assert starts == {"^MID\\d+ Mozilla": True, "\\Akey|^secret": True,
                      "^MID\\d+ Mozilla" + "m": False, "^key|secret": False,
                      "(?:^|x)Mozilla": False, "Mozilla": False}
    source = "patterns p {\n  a /^(MID\\d+) Mozilla\\/5/\n  b /Mozilla\\/5/\n}\n"
    kept = prefilterable(parse_fsm(SourceFile("p.fsm", source)).machines[0])
    assert sorted(kept) == [1]


def test_equal_factors_with_and_without_a_bound_are_confirmed_apart() -> None:
    """Joined, a pattern without a bound on its reach would give its bytes-before to the
    bounded ones, and their start ranges would reach back over the whole input."""
    engine_set = compile_set([("; ?x[a-z]{1,9}Build", ""), ("; ?y[a-z]{1,9}Build", ""),
                              ("[^;]*Build", ""), ("[^:]*Build", "")], 30)
    [engine] = [engine for engine in engine_set.engines if engine_kind(engine) == "prefilter"]
    assert sorted(confirm.tags for confirm in engine.confirms) == [(0, 1), (2,), (3,)]
    assert [confirm.reach is None for confirm in engine.confirms] == [False, True, True]


def test_longest_and_start_ranges() -> None:
    assert longest(parsed("a{2,5}(?:bc|d)").body) == 7
    assert longest(parsed("ab+").body) is None
    def confirm(reach, shortest, before=ALL_BYTES):
        factors = Factors(((1,) * shortest,), 20.0, reach, before)
        return ConfirmedPattern(0, factors, None)

    data = b"0123 56789 1234567890123456789"
    assert start_ranges([5, 6, 20], confirm(4, 3), data) == [(1, 3), (16, 17)]
    assert start_ranges([2], confirm(4, 2), data) == [(0, 0)]
    digits = sum(1 << byte for byte in b"0123456789")
    assert start_ranges([3, 9, 20], confirm(None, 2, digits), data) == [(0, 1), (5, 7), (11, 18)]
    assert start_ranges([9, 10], confirm(2, 2, digits), data) == [(7, 8)]


LITERALS = ["XQZ", "QZX", "XQZX", "ZXQ"]  # overlapping: "XQZXQ" holds three of them
TEMPLATES = ["{0}", "{0}[a-c]{{0,4}}", "[a-c]{{1,3}}{0}\\b", "(?:{0}){{2,3}}", "\\b{0}\\w*",
             "[0-9]{{2}}{0}|{1}2", "^{0}.{{0,5}}$", "(?:{0}|{1})x+", "a{{0,3}}{0}(?:b|c){{1,2}}",
             "{0}\\s*=\\s*[^\\n]{{1,6}}", "\\B{0}", "{0}$"]
FLAGS = ["", "", "i", "m", "s"]
PIECES = [*LITERALS, "xqz", "XQZXQ", "ZXQZX", "a", "b", "c", "x", "12", " ", "\n", "=", "_"]

FILLERS = ["a[^\\n]{8}b", "[bc][^\\n]{7}x+"]  # no factor, too big for a DFA of 64 states
patterns = st.lists(st.tuples(st.sampled_from(TEMPLATES), st.sampled_from(LITERALS),
                              st.sampled_from(LITERALS), st.sampled_from(FLAGS)),
                    min_size=2, max_size=5).map(
    lambda items: [(template.format(first, second), flag)
                   for template, first, second, flag in items])
haystacks = st.lists(st.sampled_from(PIECES), max_size=80).map(
    lambda pieces: "".join(pieces).encode())


@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(patterns=patterns, data=haystacks, filler=st.sampled_from(FILLERS))
def test_prefiltered_sets_equal_hyperscan_and_every_scheme(patterns, data, filler,
                                                           tmp_path) -> None:
    """A filler pattern without a factor, too big for a DFA of `max_states`, makes the set
    several engines; the literal patterns run on prefiltered engines."""
    require_module("hyperscan")
    require_cxx()
    patterns = [*patterns, (filler, "")]
    assume(hyperscan_refusal(patterns) is None)
    machine = compile_set(patterns, 64)
    assert isinstance(machine, EngineSet)
    kinds = [engine_kind(engine) for engine in machine.engines]
    assert "prefilter" in kinds, kinds
    _, _, matches = assert_engine_set_equal_reference(machine, data, tmp_path)
    assert [tuple(match) for match in matches] == hyperscan_matches(patterns, data)


def test_confirmation_keeps_categories_and_counts_split_patterns_once(tmp_path) -> None:
    """'a' and ' ' both match `[a-c ]` (the same NFA positions) but decide `\\b`
    differently: a confirmation that steps over either (a start range of several bytes)
    must keep its category (also `\\B` after). `ZQX\\w*` has matches from two factor
    hits that end at the same offset, in two start ranges (`a` is no byte a match holds
    before its factor): when the ranges fall in different jobs (few patterns, many
    chunks) both report it, and a run that only counts must still count it once.
    `QXZ(?:[A-Za-z]|[0-9]){0,9}Y` (factor `QXZ`) over `QXZab1QXZabcdY`: a thread from
    the first hit still lives where the second hit's range starts, and only a thread
    started there matches (`QXZab1Qk` before caches that step without a start)."""
    require_module("hyperscan")
    require_cxx()
    patterns = [("[a-c ]{0,3}\\bXQZ", ""), ("XQZ[a-c ]{0,3}\\B", ""), ("(?:XQZ){2,3}", ""),
                ("ZQX\\w*", ""), ("QXZ(?:[A-Za-z]|[0-9]){0,9}Y", ""), (FILLERS[0], "")]
    data = (b"aXQZ a XQZ  aXQZ bXQZ ca XQZa XQZ c XQZ aaXQZ XQZ  XQZb \n"
            b"XQZXQZXQZ XQZXQZ_XQZXQZXQZ ZQXaZQXbb ZQXcZQX_ZQX QXZab1Qk QXZab1QXZabcdY\n") * 3
    machine = compile_set(patterns, 64)
    assert "prefilter" in [engine_kind(engine) for engine in machine.engines]
    _, _, matches = assert_engine_set_equal_reference(machine, data, tmp_path)
    assert [tuple(match) for match in matches] == hyperscan_matches(patterns, data)


def test_start_ranges_reach_back_to_the_newline(tmp_path) -> None:
    """`ab.{0,40}QZXJK`: every byte but the newline may precede the factor, so a range
    reaches back to the byte after the last newline (found by memrchr), where the only
    match over `\\nabcQZXJK` starts; and no further (`a\\nbQZXJK` holds none)."""
    require_module("hyperscan")
    require_cxx()
    patterns = [("ab.{0,40}QZXJK", ""), (FILLERS[0], "")]
    machine = compile_set(patterns, 64)
    assert "prefilter" in [engine_kind(engine) for engine in machine.engines]
    data = b"\nabcQZXJK a\nbQZXJK ab\nQZXJK\nabQZXJK" * 2
    _, counts, matches = assert_engine_set_equal_reference(machine, data, tmp_path)
    assert [tuple(match) for match in matches] == hyperscan_matches(patterns, data)
    assert counts[0] == 4


def test_more_chunks_than_range_parts(tmp_path) -> None:
    """Past 65,536 lists in all (here 32,768 parts of two patterns' lists), each part of
    the ranges phase takes several chunks' factor ends, in order."""
    require_module("hyperscan")
    require_cxx()
    patterns = [("ab.{0,40}QZXJK", ""), ("XQZWJ", ""), (FILLERS[0], "")]
    machine = compile_set(patterns, 64)
    data = b"\nabcQZXJK XQZWJ a\nbQZXJK ab\nQZXJK\nabQZXJK XQZWJXQZWJ" * 20
    _, _, matches = assert_engine_set_equal_reference(
        machine, data, tmp_path, configs=["auto:1:40000", "auto:2:65537"])
    assert [tuple(match) for match in matches] == hyperscan_matches(patterns, data)


def test_factor_ends_across_note_blocks(tmp_path) -> None:
    """The literal pass notes factor ends a block of 4,096 bytes a lane at a time: with a
    lane of 12 KiB or more, every block's ends (at its first and last byte too) keep their
    offsets."""
    require_module("hyperscan")
    require_cxx()
    patterns = [("XQZ[a-c]{0,3}", ""), ("\\bQZX", ""), ("ZXQ", "i"), (FILLERS[0], "")]
    machine = compile_set(patterns, 64)
    assert "prefilter" in [engine_kind(engine) for engine in machine.engines]
    unit = b"XQZab QZX zxq " + b"c" * 4083 + b"ZXQ"  # 4,100 bytes: ends drift across blocks
    data = unit * 13
    _, _, matches = assert_engine_set_equal_reference(
        machine, data, tmp_path, configs=["auto:1:1", "auto:1:4", "auto:2:3"])
    assert [tuple(match) for match in matches] == hyperscan_matches(patterns, data)
    assert len(matches) > 60
