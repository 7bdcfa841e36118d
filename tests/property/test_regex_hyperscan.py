"""Pattern sets against Hyperscan (block mode, same flags): identical match lists."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, example, given, settings

from parafuse.fsm_compiler.reference_executor import run_reference
from tests.required_tools import require_module

from .fsm_regex_strategies import (
    compile_both,
    compile_patterns,
    haystacks,
    hyperscan_matches,
    pattern_sets,
)

require_module("hyperscan", module_level=True)

FIXED_CASES = [
    ([("ab|b", "")], b"abab"),
    ([("^ab|c", "")], b"abcab"),
    ([("[^a]b", "i")], b"AbBbab"),
    ([("a.c", ""), ("a.c", "s")], b"a\nc abc"),
    ([(r"\d{1,3}\.\d{1,3}", ""), (r"union\s+(all\s+)?select", "i")],
     b"1.2 UNION ALL  Select 10.200.3"),
    ([("x{2,3}?y", "")], b"xxxy xy xxxxy"),
    ([(r"\s", "")], b"\x0b\t \x85"),
    # zero-width matches, assertions, inline flags
    ([("^", ""), ("$", ""), (r"\b", ""), (r"\B", "")], b""),
    ([("^", ""), ("$", ""), (r"\b", ""), (r"\B", "")], b"ab c\n"),
    ([("$", ""), (r"\Z", ""), (r"\z", ""), ("a$", "m")], b"a\na\n\n"),
    ([("^a", "m"), (r"(?m)^\n", ""), ("^$", "")], b"a\n\na\n"),
    ([(r"\bfoo\b", "i"), (r"x*\b", ""), (r"(?:^|\b)a", ""), (r"a\b-", "")], b"Foo a-a foox"),
    ([(r"a(?i)b|c", ""), (r"(?i:a)b", ""), (r"(?i)a(?-i:b)", "")], b"aB C Ab AB ab"),
    ([("(?x) a b  # comment\n c", ""), (r"\p{Lu}\pL", "i"), ("[[:^alpha:]]+", "")],
     b"abc AbcDE\xc9\xe9 12"),
    ([("(?i)(?x)\n  a b   # AB, any case\n  [c ]\n", ""), ("a b\n  \\b", "x")], b"xaBc ab c"),
    ([(r"\Qa.b\E+", ""), (r"\x{41}\101\o{101}", ""), (r"\cA|\e|\a", "")],
     b"a.bbb AAA \x01\x1b\x07"),
]


@pytest.mark.parametrize("patterns,data", FIXED_CASES)
def test_known_pattern_sets_match_hyperscan(patterns, data) -> None:
    machine = compile_patterns(patterns)
    assert run_reference(machine, data, True).matches == hyperscan_matches(patterns, data)


# Assertions that narrow the byte a position matches (\\b before [^a] makes it a word
# byte), around '\\n' and the end of the input: refused exactly when Hyperscan refuses
# them ("Pattern can never match").
NEVER_MATCH_CASES = [r"\b\B|^\b[^a]\B$", r"^\b[^a]\B$", r"\b[^a]\B$", r"a\B$", r"a\B\n",
                     r"\w\B\Z", r"\b\n", r"a\b\n", r"[a\n]\B$", r"^\B\n", r"^\b\n",
                     r"a\B(?m)$", r"^\B[a-]\b", r"-\b[a-]\B$", r"(?m)a\B$", r"[a-]\b\z",
                     r"\B[\n-]\b", r"(?m)^\B\n\b"]


@pytest.mark.parametrize("regex", NEVER_MATCH_CASES)
def test_never_matching_patterns_refused_as_hyperscan_does(regex) -> None:
    compile_both([(regex, "")])  # AssertionError when only one of the two refuses


@settings(max_examples=1000, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(pattern_sets, haystacks)
@example([(r"\b\B|^\b[^a]\B$", "")], b"a-").via("a refusal random seeds found")
def test_random_pattern_sets_match_hyperscan(patterns, data) -> None:
    machine = compile_both(patterns)
    assume(machine is not None)
    result = run_reference(machine, data, True)
    expected = hyperscan_matches(patterns, data)
    assert result.matches == expected
    assert list(result.counts) == [sum(1 for _, tag in expected if tag == index)
                                   for index in range(len(patterns))]
