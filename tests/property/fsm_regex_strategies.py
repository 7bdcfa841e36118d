"""Hypothesis strategies: regexes of the pattern-set syntax (assertions, inline flags,
flags `i s m x`, properties, POSIX classes, escapes), pattern sets, haystacks, and
helpers to compile them with boostfsm and with Hyperscan (the oracle)."""

from __future__ import annotations

from hypothesis import strategies as st

from parafuse.fsm_compiler.compiled import CompiledMachine
from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import CompileError, SourceFile

HAYSTACK_BYTES = b"abcAB1 \n\x0b\xe9-_\xb5"
_LITERALS = ["a", "b", "c", "A", "B", "1", " ", "\\n", "\\x0b", "\\xe9", "\\-", "-", "\\.",
             "_", "\\x{62}", "\\141", "\\cA", "\\Qa-\\E", "\\xb5"]
_CLASSES = ["[ab]", "[^a]", "[a-c]", "[^\\n]", "[A-Z1]", "[-a]", "[b-]", "[^ab\\s]", "\\d",
            "\\w", "\\s", "\\W", "\\S", "\\D", ".", "[\\x00-\\x7f]", "[]a]", "\\h", "\\v",
            "\\pL", "\\p{Lu}", "\\P{L}", "\\p{^Ll}", "\\p{Latin}", "[[:alpha:]]",
            "[[:^lower:]]", "[\\d-]", "\\C"]
_QUANTIFIERS = ["*", "+", "?", "{2}", "{1,}", "{0,2}", "{1,3}", "*?", "+?", "??", "{2,3}?"]
_WORD_ASSERTIONS = ["\\b", "\\B"]
_INLINE = ["(?i)", "(?-i)", "(?s)", "(?m)", "(?-s)", "(?is-m)"]
_STARTS = ["", "", "", "^", "\\A", "\\b", "(?m)^"]
_ENDS = ["", "", "", "$", "\\z", "\\Z", "\\b", "\\B", "(?m)$"]


def _atoms(depth: int) -> st.SearchStrategy[str]:
    simple = st.sampled_from(_LITERALS) | st.sampled_from(_CLASSES)
    if depth <= 0:
        return simple
    inner = _alternation(depth - 1)
    groups = st.builds(lambda body, kind: kind.format(body), inner,
                       st.sampled_from(["({})", "(?:{})", "(?<n>{})", "(?i:{})", "(?-i:{})",
                                        "(?s:{})"]))
    return simple | groups


def _piece(depth: int) -> st.SearchStrategy[str]:
    quantifier = st.sampled_from([""] * 4 + _QUANTIFIERS)
    quantified = st.builds(lambda atom, q: atom + q, _atoms(depth), quantifier)
    zero_width = st.sampled_from(_WORD_ASSERTIONS + _INLINE)
    return quantified | zero_width


def _sequence(depth: int) -> st.SearchStrategy[str]:
    return st.lists(_piece(depth), min_size=1, max_size=3).map("".join)


def _alternation(depth: int) -> st.SearchStrategy[str]:
    return st.lists(_sequence(depth), min_size=1, max_size=2).map("|".join)


def _top_alternative() -> st.SearchStrategy[str]:
    """Anchors only where Hyperscan accepts them: start anchors first, end anchors last."""
    return st.builds(lambda start, body, end: start + body + end, st.sampled_from(_STARTS),
                     st.lists(_piece(1), max_size=3).map("".join), st.sampled_from(_ENDS))


regexes = st.lists(_top_alternative(), min_size=1, max_size=2).map("|".join)


def _assertion_free(depth: int) -> st.SearchStrategy[str]:
    """Alternations of the same pieces without any assertion (what token rules take)."""
    atom = st.sampled_from(_LITERALS) | st.sampled_from(_CLASSES)
    if depth > 0:
        atom = atom | st.builds(lambda body, kind: kind.format(body), _assertion_free(depth - 1),
                                st.sampled_from(["({})", "(?:{})", "(?i:{})", "(?s:{})"]))
    piece = st.builds(lambda a, q: a + q, atom, st.sampled_from([""] * 4 + _QUANTIFIERS))
    sequence = st.lists(piece | st.sampled_from(_INLINE), min_size=1, max_size=3).map("".join)
    return st.lists(sequence, min_size=1, max_size=2).map("|".join)


assertion_free_regexes = _assertion_free(1)
flags = st.sampled_from(["", "", "i", "s", "m", "is", "x", "im"])
pattern_sets = st.lists(st.tuples(regexes, flags), min_size=1, max_size=3)
haystacks = st.lists(st.sampled_from(HAYSTACK_BYTES), max_size=300).map(bytes)


MAX_STATES = 3000  # random sets past this are skipped: they test nothing more, slowly


def templated_sets(templates: list[str], literals: list[str], flag_choices: list[str],
                   pieces: list[str], max_pieces: int = 90):
    """(pattern lists, haystacks): 2-4 patterns, each a template filled with two different
    literals, under one of `flag_choices`; haystacks of up to `max_pieces` pieces."""
    pattern_lists = st.lists(st.tuples(st.sampled_from(templates), st.sampled_from(literals),
                                       st.sampled_from(literals), st.sampled_from(flag_choices)),
                             min_size=2, max_size=4).map(
        lambda items: [(template.format(first, second), flag)
                       for template, first, second, flag in items if first != second])
    texts = st.lists(st.sampled_from(pieces), max_size=max_pieces).map(
        lambda chosen: "".join(chosen).encode())
    return pattern_lists, texts


def pattern_set_source(patterns: list[tuple[str, str]]) -> str:
    lines = [f"    t{index} /{regex}/{flag}" for index, (regex, flag) in enumerate(patterns)]
    return (f"options {{ max_states {MAX_STATES} }}\npatterns p {{\n" + "\n".join(lines)
            + "\n}\n")


def compile_patterns(patterns: list[tuple[str, str]]):
    """The minimal DFA of `patterns`, or None when it needs more than MAX_STATES states
    (then it compiles to several engines: tests/property/test_fsm_engine_sets.py)."""
    machine = compile_file(SourceFile("p.fsm", pattern_set_source(patterns))).machines[0]
    return machine if isinstance(machine, CompiledMachine) else None


def _hyperscan_database(patterns: list[tuple[str, str]]):
    import hyperscan

    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    hs_flags = [(hyperscan.HS_FLAG_CASELESS if "i" in flag else 0)
                | (hyperscan.HS_FLAG_DOTALL if "s" in flag else 0)
                | (hyperscan.HS_FLAG_MULTILINE if "m" in flag else 0) for _, flag in patterns]
    expressions = [("(?x)" if "x" in flag else "") + regex for regex, flag in patterns]
    database.compile(expressions=[text.encode("latin-1") for text in expressions],
                     ids=list(range(len(patterns))), elements=len(patterns), flags=hs_flags)
    return database


def hyperscan_refusal(patterns: list[tuple[str, str]]) -> str | None:
    """Hyperscan's error message when it refuses one of `patterns` alone, else None."""
    import hyperscan

    for pattern in patterns:
        try:
            _hyperscan_database([pattern])
        except hyperscan.error as error:
            return str(error)
    return None


def compile_both(patterns: list[tuple[str, str]]):
    """The machine of `patterns` when both boostfsm and Hyperscan accept them, else None.

    boostfsm must accept what Hyperscan accepts and refuse what it refuses (else
    AssertionError).
    """
    refusal = hyperscan_refusal(patterns)
    try:
        machine = compile_patterns(patterns)
    except CompileError as error:
        assert refusal is not None, f"boostfsm refuses what Hyperscan accepts: {error}"
        return None
    assert refusal is None, f"boostfsm accepts what Hyperscan refuses ({refusal})"
    return machine


def hyperscan_matches(patterns: list[tuple[str, str]], data: bytes) -> list[tuple[int, int]]:
    """Every (end offset, pattern index) Hyperscan reports in block mode, once each."""
    database = _hyperscan_database(patterns)
    found: set[tuple[int, int]] = set()

    def on_match(pattern_id, start, end, match_flags, context):
        found.add((end, pattern_id))

    database.scan(data, match_event_handler=on_match)
    return sorted(found)
