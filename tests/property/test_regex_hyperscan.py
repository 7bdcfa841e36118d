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

    # \Q...\E inside classes: quoted '-', ']' and '^' are literal; an empty \Q\E is ignored
    ([(r"[\Qa-c\E]+", ""), (r"[a\Q\E-c]x", "i"), (r"[\Q]\E-]", "s"), (r"[^\Q^\E]", "s"),
      (r"[\Q\E^a]b", ""), (r"[x\Q-\Ey]\n", "is")],
     b"a-c bcx B]x -^\n ab ^b x-y\n"),
    # anchors Hyperscan accepts once its leading repeats keep their minimum
    ([("(?:^){1,2}a", ""), ("(?:^)+a", "m"), ("(?:^){0,2}b", "m"), (r"(?:\z)?^", ""),
      ("^^a", ""), (r"^\Aa", ""), (r"(?:\b){2}a", ""), ("(?:$){2}", "m")],
     b"ab\nab\n"),
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


# Where Hyperscan refuses: a start anchor repeated in more than one copy ("Embedded anchors
# not supported"), a start anchor after a multi-line '^' ("Embedded start anchors not
# supported"), a repeat {0} ("Invalid repeat"), classes it cannot read; and their accepted
# neighbours. boostfsm must refuse exactly these.
REFUSAL_CASES = [
    ("(?:^){2}a", ""), ("(?:^){2}", ""), ("(?:^){2}", "m"), (r"(?:(?:\A)+){2}a", ""),
    ("^^a", "m"), (r"^\Aa", "m"), (r"(?m)^\Aa", ""), ("a{0}b", ""), ("a{0,0}b", ""),
    ("x{0}a", ""), ("(?:){0}a", ""), (r"(?:\b){0}a", ""), ("(?:^){2,}a", ""),
    ("(?:^){2,3}a", ""), ("(?:^|^){2}a", ""), ("^(?:^){0,2}a", ""), ("^(?:^){1,2}a", ""),
    ("^(?:(?m)^)+a", ""), ("^(?:^)?a", "m"), ("(?:(?:^)+)+a", "m"), ("x(?:^|){2}a", ""),
    (r"$^", ""), (r"(?:\z)?^a", ""), ("(?:^|$)(?:^|$)+", ""),
    (r"[a-\Q-\E]", ""), (r"[a-\Q\E-c]", ""), (r"[a-\Q\E\d]", ""), (r"[\Qab]", ""),
    ("[[:a-b:]]", ""), ("[:a-b:]", ""), (r"[[:alpha\Q\E:]]", ""), ("[.a.]", ""),
    # accepted
    ("^^a", ""), (r"^\Aa", ""), ("(?:^)+a", ""), (r"(?:\b){2}a", ""), ("(?:$){2}", ""),
    ("(?:$){2}", "m"), ("a{0,1}b", ""), ("a{0,}b", ""), ("(?:^){1,2}a", ""),
    ("(?:^){0,2}a", ""), ("(?:^)+a", "m"), ("(?:^|){2}a", ""), ("(?:(?:^)?){2}a", ""),
    (r"\A(?m)^a", ""), (r"(?:\z){0,1}(?:^)", ""), ("(?:^|$)+", ""), ("[[.a]", ""),
]


@pytest.mark.parametrize("regex,flags", REFUSAL_CASES)
def test_refused_exactly_where_hyperscan_refuses(regex, flags) -> None:
    compile_both([(regex, flags)])  # AssertionError when only one of the two refuses


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
