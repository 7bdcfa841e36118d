"""Literal patterns of prefiltered engines (fsm_compiler/engines/literal_patterns.py):
which patterns compare their strings at the factor ends instead of sweeping an NFA,
and generated sets of them (alternations, optional and caseless bytes, strings longer
than a factor's window, strings that end others) beside patterns that are not literal,
equal to the reference (which sweeps every NFA) and to Hyperscan in every scheme."""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from parafuse.fsm_compiler.engines.engines import EngineSet, engine_kind
from parafuse.fsm_compiler.engines.literal_patterns import literal_ends
from parafuse.fsm_compiler.engines.required_literals import required_factors
from tests.property.fsm_engine_set_checks import assert_engine_set_equal_reference
from tests.property.fsm_regex_strategies import hyperscan_matches, hyperscan_refusal
from tests.property.test_fsm_engine_sets import compile_set
from tests.property.test_fsm_prefilter import FILLERS, factor_text, parsed
from tests.required_tools import require_cxx, require_module


def _ends(regex: str, flags: str = ""):
    pattern = parsed(regex, flags)
    return literal_ends(pattern, required_factors(pattern))


def test_literal_patterns_and_the_bytes_after_their_windows() -> None:
    # a space selects too little to be in a window: `Windows`'s factor end is 7 bytes
    # before the string's
    assert [(factor_text(s), after) for s, after in _ends(r"(Win(?:dows NT |32NT\/)6\.4)")] == \
        [("Win32NT/6.4", 0), ("Windows NT 6.4", 7)]
    # a string of 20 bytes keeps a window of at most 16: the last bytes follow it
    ((string, after),) = _ends("QXZJQXZJQXZJQXZJabcd")
    assert len(string) == 20 and 4 <= after < 20
    assert len(_ends("(?i)XQZ[ab]?")) == 2  # byte sets stay sets: `(?i)X` is {X, x}
    ((string, after),) = _ends("[a-z]{4}XQZW")  # broad bytes before the window
    assert len(string) == 8 and after == 0


def test_patterns_that_are_not_literal() -> None:
    assert _ends(r"\bXQZW\b") is None  # an assertion holds the match in place
    assert _ends(r"^XQZW") is None
    assert _ends("XQZW+") is None  # infinitely many strings
    assert _ends("XQZW(?:ab|cd|ef){0,3}") is None  # 40 strings: more than 16 to compare
    assert _ends("(?:XQZJ){20}") is None  # longer than the analysis keeps strings (64 bytes)


def test_literal_and_guarded_patterns_are_confirmed_apart_from_the_rest(tmp_path) -> None:
    """Three patterns with the factor `XQZJK`: a literal one, one with a guard and one with
    neither each get their own confirmation, so neither of the first two sweeps an NFA
    at every factor end for want of the third's."""
    require_module("hyperscan")
    require_cxx()
    patterns = [("XQZJK", ""), ("XQZJK[a-c ]{0,70}QZXW", ""), ("XQZJK[a-c]+", ""),
                (FILLERS[0], "")]
    machine = compile_set(patterns, 64)
    confirms = [confirm for engine in machine.engines if engine_kind(engine) == "prefilter"
                for confirm in engine.confirms]
    assert sorted((confirm.tags, bool(confirm.literals), bool(confirm.guards))
                  for confirm in confirms) == [((0,), True, False), ((1,), False, True),
                                               ((2,), False, False)]
    data = b"XQZJK abc QZXW XQZJKaXQZJK XQZJKcc\nQZXW XQZJK" * 3
    _, _, matches = assert_engine_set_equal_reference(machine, data, tmp_path)
    assert [tuple(match) for match in matches] == hyperscan_matches(patterns, data)


LITERALS = ["XQZW", "QZXW", "WXQZJ", "JQKZ", "ZQJXKWQZJXKQWZJXQK"]  # the last: 18 bytes
TEMPLATES = ["{0}", "(?:{0}|{1})", "{0}[ab]?", "(?:{0}|X{0}|QX{0})", "{0}(?:ab|c)",
             "(?:a|bc){0}", "{0}{1}", "{0}[a-c]{{0,2}}"]
FLAGS = ["", "", "i", "s"]
PIECES = [*LITERALS, "xqzw", "XQZWXQZW", "QX", "X", "a", "b", "c", "ab", " ", "\n"]
NOT_LITERAL = ["XQZW[a-c]+", "\\bJQKZ", "QZXW(?:ab)*c"]

patterns = st.lists(st.tuples(st.sampled_from(TEMPLATES), st.sampled_from(LITERALS),
                              st.sampled_from(LITERALS), st.sampled_from(FLAGS)),
                    min_size=2, max_size=5).map(
    lambda items: [(template.format(first, second), flag)
                   for template, first, second, flag in items])
haystacks = st.lists(st.sampled_from(PIECES), max_size=90).map(
    lambda pieces: "".join(pieces).encode())


@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(patterns=patterns, other=st.sampled_from(NOT_LITERAL), data=haystacks,
       filler=st.sampled_from(FILLERS))
def test_literal_sets_equal_the_reference_and_hyperscan(patterns, other, data, filler,
                                                        tmp_path) -> None:
    require_module("hyperscan")
    require_cxx()
    patterns = [*patterns, (other, ""), (filler, "")]
    assume(hyperscan_refusal(patterns) is None)
    machine = compile_set(patterns, 64)
    assert isinstance(machine, EngineSet)
    prefilters = [engine for engine in machine.engines if engine_kind(engine) == "prefilter"]
    assume(any(confirm.literals for engine in prefilters for confirm in engine.confirms))
    _, _, matches = assert_engine_set_equal_reference(machine, data, tmp_path)
    assert [tuple(match) for match in matches] == hyperscan_matches(patterns, data)


def test_an_end_found_from_two_factor_ends_is_reported_once(tmp_path) -> None:
    """`JQKZW ...XQZ`'s window `JQKZW` ends 7 bytes before the string, `XQZ`'s at its end:
    over `JQKZW XQZXQZ` the first factor end finds the match ending at 12, the next one
    (`XQZ` at 9) an earlier match, the last (`XQZ` at 12) the first one again."""
    require_module("hyperscan")
    require_cxx()
    assert sorted(after for _, after in _ends("JQKZW ...XQZ|XQZ")) == [0, 7]
    patterns = [("JQKZW ...XQZ|XQZ", ""), (FILLERS[0], "")]
    machine = compile_set(patterns, 64)
    assert any(confirm.literals for engine in machine.engines
               if engine_kind(engine) == "prefilter" for confirm in engine.confirms)
    data = b"JQKZW XQZXQZ aJQKZW XQZXQZ"
    _, counts, matches = assert_engine_set_equal_reference(machine, data, tmp_path)
    assert [tuple(match) for match in matches] == hyperscan_matches(patterns, data)
    assert counts[0] == 4
