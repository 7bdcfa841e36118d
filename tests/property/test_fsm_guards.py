"""Guards of prefiltered patterns (fsm_compiler/engines/guards.py): the second literal a
pattern's matches hold near the factor, and its window; and generated sets of two
literals with bounded gaps between (after and before the factor, gaps that may or may
not hold a newline, optional items, alternatives), over haystacks where the literals
occur near, far and across newlines, equal to the reference (which uses no guard) and to
Hyperscan in every scheme."""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from parafuse.fsm_compiler.engines.engines import EngineSet, engine_kind
from parafuse.fsm_compiler.engines.guards import guard_for
from parafuse.fsm_compiler.engines.required_literals import required_factors
from tests.property.fsm_engine_set_checks import assert_engine_set_equal_reference
from tests.property.fsm_regex_strategies import (
    hyperscan_matches,
    hyperscan_refusal,
    templated_sets,
)
from tests.property.test_fsm_engine_sets import compile_set
from tests.property.test_fsm_prefilter import FILLERS, factor_text, parsed
from tests.required_tools import require_cxx, require_module


def _guard(regex: str, flags: str = ""):
    pattern = parsed(regex, flags)
    return guard_for(pattern, required_factors(pattern))


def test_a_guard_after_the_factor_and_its_window() -> None:
    """`Mozilla` is the factor (q: its end); `Mobile` ends 1 + 6 to 200 + 6 bytes after q,
    with no newline between (`.`)."""
    guard = _guard(r"Mozilla.{1,200}Mobile")
    assert [factor_text(s) for s in guard.strings] == ["Mobile"] and guard.after
    assert (guard.lo, guard.hi, guard.near) == (7, 206, 0)
    assert not guard.gap >> ord("\n") & 1 and guard.gap >> ord("x") & 1


def test_a_guard_before_the_factor_and_its_window() -> None:
    """The factor `XQZWV` is the rarer run; `QQJK` ends 2 to 90 bytes before its start
    (the gap's 89 lengths are too many strings for one run)."""
    guard = _guard(r"QQJK[a-c]{2,90}XQZWV")
    assert [factor_text(s) for s in guard.strings] == ["QQJK"] and not guard.after
    assert (guard.lo, guard.hi, guard.near) == (-95, -7, -5)


def test_a_guard_for_factors_an_item_scored_before_its_run() -> None:
    """`(?:MSIE|XBMC)` is one item: its own analysis scored the factors before the run of
    that one item did, and the run still carries the guard."""
    guard = _guard(r"(?:MSIE|XBMC).{0,200}\b(Xbox)\b")
    assert [factor_text(s) for s in guard.strings] == ["Xbox"] and guard.after
    assert (guard.lo, guard.hi) == (4, 204)


def test_a_guard_after_an_unbounded_gap_that_no_factor_ends_in() -> None:
    """`[a-c ]+` between: its bytes never end the factor `XQZWV`, so a check from q runs
    over the gap's bytes to the first other byte, however far, and each byte is run over
    from one factor end at most; a single `=` is selective enough after such a gap."""
    guard = _guard(r"XQZWV[a-c ]+QQJK")
    assert [factor_text(s) for s in guard.strings] == ["QQJK"] and guard.after
    assert (guard.lo, guard.near) == (5, 0) and guard.hi >= 1 << 40
    guard = _guard(r"QQJK\s*XQZWV")
    assert [factor_text(s) for s in guard.strings] == ["QQJK"] and not guard.after
    assert guard.lo <= -(1 << 40) and (guard.hi, guard.near) == (-5, -5)
    guard = _guard(r"(?:username|user)[ \t]*=[ \t]*([a-z]{3,8})")
    assert [factor_text(s) for s in guard.strings] == ["="] and guard.after
    assert _guard(r"XQZWV[a-cV]+QQJK") is None  # a factor may end inside the gap
    assert _guard(r"XQZWV.*QQJK") is None


def test_no_guard_without_a_bounded_gap_or_a_selective_run() -> None:
    assert _guard(r"XQZWV[a-c]{0,70}ab") is None  # `ab` selects too little
    assert _guard(r"XQZWV[a-c]{0,3}QQJK") is None  # one run: its strings are few
    assert _guard(r"(?:XQZWV|QQJK)[a-c]{1,70}JJQQ") is not None  # the alternation is a run


LITERALS = ["XQZW", "QZXW", "WXQZJ", "JQKZ"]
# gaps of more lengths than a run's 64 strings, so that the literals are runs of their own
TEMPLATES = ["{0}[a-c ]{{0,70}}{1}", "{0}.{{1,80}}{1}x", "{1}[^\\n]{{0,66}}{0}",
             "{0}[a-c ]*{1}", "{1}\\s+{0}", "{0}(?:ab|c){{1,40}}{1}",
             "(?:{0}|{1})[a-c]{{0,70}}ZZQJ", "{0}(?:a|b)?{1}", "{1}\\s{{0,70}}{0}\\b",
             "{0}[a-c]{{2,70}}{1}[a-c]{{0,2}}{0}"]
FLAGS = ["", "", "i", "s"]
PIECES = [*LITERALS, "xqzw", "a", "b", "c", "ab", " ", "\n", "x", "ZZQJ", "aaaaaaaa"]

patterns, haystacks = templated_sets(TEMPLATES, LITERALS, FLAGS, PIECES)


@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(patterns=patterns, data=haystacks, filler=st.sampled_from(FILLERS))
def test_guarded_sets_equal_the_reference_and_hyperscan(patterns, data, filler,
                                                        tmp_path) -> None:
    check_guarded_set([*patterns, (filler, "")], data, tmp_path)


def check_guarded_set(patterns: list[tuple[str, str]], data: bytes, tmp_path) -> None:
    """A generated set (more than its filler) whose prefiltered patterns have a guard:
    equal to the reference and to Hyperscan."""
    require_module("hyperscan")
    require_cxx()
    assume(len(patterns) >= 3)
    assume(hyperscan_refusal(patterns) is None)
    machine = compile_set(patterns, 64)
    assert isinstance(machine, EngineSet)
    prefilters = [engine for engine in machine.engines if engine_kind(engine) == "prefilter"]
    assume(any(confirm.guards for engine in prefilters for confirm in engine.confirms))
    _, _, matches = assert_engine_set_equal_reference(machine, data, tmp_path)
    assert [tuple(match) for match in matches] == hyperscan_matches(patterns, data)


def test_matches_at_the_edges_of_every_window(tmp_path) -> None:
    """Each pattern's second literal at the nearest and the farthest distance its gap
    allows, one byte past either, with a newline in the gap, and literals of several
    lengths in an alternation: the guards keep exactly the factor ends that start
    matches."""
    require_module("hyperscan")
    require_cxx()
    patterns = [("XQZW[a-c ]{0,70}QZXW", ""), ("JQKZ[^\\n]{3,66}WXQZJ", ""),
                ("(?:XQZWJ|QK)[a-c]{2,70}ZZQJ", ""), ("ZZJQ[a-c]{0,75}(?:JJQQK|QKQ)", ""),
                # the factor's window of `JQKZW[d-z]Q` ends two bytes before its string: the gap
                # starts after them, and `x` is no gap byte
                ("(?:XQZWJ|JQKZW[d-z])Q[a-c ]{0,70}QZX", ""),
                # `.`: the gap ends at a newline (found by memchr), here right after the string
                ("ZQJXK.{2,70}QZXW", ""),
                # the factors are the alternation's own (no run's): the guard is its run's
                ("(?:XQZWJ|QZXWK).{0,70}\\bJQKZ\\b", ""), (FILLERS[0], "")]
    machine = compile_set(patterns, 64)
    guarded = [confirm for engine in machine.engines if engine_kind(engine) == "prefilter"
               for confirm in engine.confirms if confirm.guards]
    assert len(guarded) == 7, [engine_kind(engine) for engine in machine.engines]
    pieces = []
    for gap in (0, 1, 3, 65, 66, 67, 69, 70, 71, 75, 76):
        filler = ("abc " * 30)[:gap].encode()
        pieces += [b"XQZW" + filler + b"QZXW", b"JQKZ" + filler.replace(b" ", b"c") + b"WXQZJ",
                   b"XQZWJ" + filler.replace(b" ", b"a") + b"ZZQJ",
                   b"QK" + filler.replace(b" ", b"b") + b"ZZQJ",
                   b"ZZJQ" + filler.replace(b" ", b"a") + b"JJQQK",
                   b"ZZJQ" + filler.replace(b" ", b"c") + b"QKQ",
                   b"JQKZ" + filler[:gap // 2] + b"\n" + filler[gap // 2:] + b"WXQZJ",
                   b"JQKZWxQ" + filler + b"QZX", b"XQZWJQ" + filler + b"QZX",
                   b"XQZWJ" + filler + b" JQKZ ", b"QZXWK" + filler + b" JQKZ\n",
                   b"ZQJXK" + filler + b"QZXW\n", b"ZQJXK" + filler[:gap // 2] + b"\n" +
                   filler[gap // 2:] + b"QZXW"]
    data = b"|".join(pieces)
    _, _, matches = assert_engine_set_equal_reference(machine, data, tmp_path)
    assert [tuple(match) for match in matches] == hyperscan_matches(patterns, data)


def test_matches_across_unbounded_gaps_of_any_length(tmp_path) -> None:
    """Guards after and before unbounded gaps: gaps of 0 to 3,000 bytes (past the 1,024 a
    bounded guard may search), broken by a byte outside the gap, and factors with nothing
    after them, equal to the reference and to Hyperscan."""
    require_module("hyperscan")
    require_cxx()
    patterns = [("XQZWV[a-c ]+QQJK", ""), ("QQJK\\s*XQZWV", ""),
                ("(?:username|user)[ \\t]*=[ \\t]*([a-z]{3,8})", ""), (FILLERS[0], "")]
    machine = compile_set(patterns, 64)
    guarded = [confirm for engine in machine.engines if engine_kind(engine) == "prefilter"
               for confirm in engine.confirms if confirm.guards]
    assert len(guarded) == 3
    pieces = []
    for gap in (0, 1, 2, 31, 1023, 1024, 1025, 3000):
        run, spaces = ("abc " * 800)[:gap].encode(), (" \t" * 1600)[:gap].encode()
        pieces += [b"XQZWV" + run + b"QQJK", b"XQZWV" + run + b"xQQJK", b"XQZWV" + run,
                   b"QQJK" + spaces.replace(b"\t", b"\n") + b"XQZWV",
                   b"QQJK" + spaces + b"yXQZWV", b"user" + spaces + b"=" + spaces + b"abcdef",
                   b"username" + spaces + b"x=abc", b"user" + spaces]
    data = b"|".join(pieces)
    _, _, matches = assert_engine_set_equal_reference(machine, data, tmp_path)
    assert [tuple(match) for match in matches] == hyperscan_matches(patterns, data)
    assert len(matches) > 20
