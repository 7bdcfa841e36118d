"""Split guards of prefiltered patterns (fsm_compiler/engines/guards.py split_guard): where
a pattern's common factor lies in one part of its top-level concatenation and another
part requires a short literal near it, that literal is checked in a window of each
factor end before a start range is made. Windows computed by hand; patterns with the
literal at the nearest and farthest place its window allows, one byte past either, and
with the factor found away from a match, equal to the reference (which uses no guard)
and to Hyperscan in every scheme."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from parafuse.fsm_compiler.engines.engines import engine_kind
from parafuse.fsm_compiler.engines.guards import rarer_side, split_guard
from parafuse.fsm_compiler.engines.required_literals import required_factors
from tests.property.fsm_engine_set_checks import assert_engine_set_equal_reference
from tests.property.fsm_regex_strategies import hyperscan_matches, templated_sets
from tests.property.test_fsm_engine_sets import compile_set
from tests.property.test_fsm_guards import check_guarded_set
from tests.property.test_fsm_prefilter import FILLERS, factor_text, parsed
from tests.required_tools import require_cxx, require_module


def _split(regex: str, flags: str = ""):
    pattern = parsed(regex, flags)
    return split_guard(pattern, required_factors(pattern))


def test_a_literal_before_a_common_factor() -> None:
    """The factors are `api`, `app`, `key` (reach 12); the left part `\\b(?:facebook|fb).?`
    is 2 to 9 bytes and holds `fb` or `facebook` ending up to 8 bytes in: one ends 3 + 0
    to 3 + 7 bytes before the factor's end."""
    guard = _split(r"\b(?:facebook|fb).?(?:api|app|key)[a-z0-9]{8}", "i")
    assert sorted(factor_text(s) for s in guard.strings) == ["facebook", "fb"]
    assert (guard.lo, guard.hi, guard.after) == (-10, -3, False)


def test_a_literal_after_a_common_factor_inside_a_group() -> None:
    """`00` then 13 letters or digits then `!`, all in a group: the split falls inside it,
    and `!` ends exactly 14 bytes after the factor's end."""
    guard = _split(r"\b(00[a-zA-Z0-9]{13}![a-zA-Z0-9._]{20})")
    assert [factor_text(s) for s in guard.strings] == ["!"]
    assert (guard.lo, guard.hi, guard.after) == (14, 14, True)
    guard = _split(r"(?:token|key)[\"':= ]{0,5}\b(s\.[A-Za-z0-9_-]{24,40})")
    assert [factor_text(s) for s in guard.strings] == ["s."]
    assert (guard.lo, guard.hi, guard.after) == (2, 9, True)


def test_the_rarer_side_of_a_guarded_pair_is_scanned_for() -> None:
    """Salesforce's `00`, 13 letters or digits, `!`: the hand-weighted model rates `00`
    rarer, the byte-pair model `!` (digits come in runs). The prefilter scans for `!`
    (its reach counts the 15 bytes before it) and checks `00` exactly 14 bytes before its
    end, the narrowest window of the pattern's splits; pairs the pair model rates the
    other way keep their factors."""
    pattern = parsed(r"\b(00[a-zA-Z0-9]{13}![a-zA-Z0-9._]{96})")
    swapped = rarer_side(pattern, required_factors(pattern))
    assert [factor_text(s) for s in swapped.factors] == ["!"]
    assert swapped.reach == 16
    guard = split_guard(pattern, swapped)
    assert [factor_text(s) for s in guard.strings] == ["00"]
    assert (guard.lo, guard.hi, guard.after) == (-14, -14, False)
    for regex, flags in [(r"\b(?:facebook|fb).?(?:api|app|key)[a-z0-9]{8}", "i"),
                         (r"(?:token|key)[\"':= ]{0,5}\b(s\.[A-Za-z0-9_-]{24,40})", ""),
                         (r"QXZJKWVQ.?(?:api|key)", "")]:
        pattern = parsed(regex, flags)
        assert rarer_side(pattern, required_factors(pattern)) is None, regex


def test_no_split_guard_for_rare_factors_or_wide_windows() -> None:
    assert _split(r"QXZJKWVQ.?(?:api|key)") is None  # the factor is rare already
    assert _split(r"(?:fb|facebook).{0,40}(?:api|key)") is None  # 48 positions to check
    assert _split(r"(?:api|key)[a-z]*fb") is None  # unbounded between


# Each pattern's literal at the edges of its window, one byte past them, with a newline
# between, and the factor alone.
EDGE_PATTERNS = [(r"\b(?:zfb|zfacebook).?(?:api|app|key)[a-z0-9]{4}", "i"),
                 (r"\b(00[a-zA-Z0-9]{5}![a-z]{3})", ""),
                 (r"(?:token|key)[\"':= ]{0,5}\b(s\.[A-Za-z0-9_-]{4,9})", ""),
                 (FILLERS[0], "")]


def test_matches_at_the_edges_of_every_split_window(tmp_path) -> None:
    require_module("hyperscan")
    require_cxx()
    machine = compile_set(EDGE_PATTERNS, 64)
    guarded = [confirm for engine in machine.engines if engine_kind(engine) == "prefilter"
               for confirm in engine.confirms if confirm.guards]
    assert len(guarded) == 3
    assert ["!"] in [[factor_text(s) for s in confirm.factors.factors] for confirm in guarded]
    pieces = []
    for gap in ("", "_", "__", "\n", " "):
        for literal in ("zfb", "zFaceBook", "zfbx", "fb", "ZFB"):
            for factor in ("api", "App", "KEY", "apikey"):
                pieces.append(f" {literal}{gap}{factor}abc1 ")
        for run in ("abcde", "abcd", "abcdef", "ab\ncd"):
            pieces += [f" 00{run}{gap}!xyz ", f" 00{run}!xyz{gap}", f"x00{run}!xyz "]
        for spaces in ("", " ", "'=  ", "\"'= : ", " : = '\""):
            for tail in ("s.abcd", "s.abcdefghij", "s.ab", "xs.abcd", "S.abcd"):
                pieces.append(f"token{gap}{spaces}{tail};key{spaces}{tail}\n")
    data = "|".join(pieces).encode()
    _, _, matches = assert_engine_set_equal_reference(machine, data, tmp_path)
    assert [tuple(match) for match in matches] == hyperscan_matches(EDGE_PATTERNS, data)
    assert len(matches) > 100


LITERALS = ["fb", "zq", "x!", "key", "00"]
TEMPLATES = ["\\b(?:{0}|{1}).?(?:api|key)[a-z]{{2}}", "{0}[a-c]{{1,4}}(?:{1}|api)",
             "(?:api|app|key)[ :=]{{0,3}}({0}[a-z]{{2,5}})", "\\b({1}[a-c0-9]{{3}}{0}[a-z]{{2}})"]
PIECES = [*LITERALS, "api", "App", "KEY", "a", "b", "c", " ", ":", "=", "\n", "0", "x", "!"]

patterns, haystacks = templated_sets(TEMPLATES, LITERALS, ["", "i"], PIECES)


@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(patterns=patterns, data=haystacks)
def test_split_guarded_sets_equal_the_reference_and_hyperscan(patterns, data,
                                                              tmp_path) -> None:
    check_guarded_set([*patterns, (FILLERS[1], "")], data, tmp_path)
