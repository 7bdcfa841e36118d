"""Hypothesis strategies: regexes from the supported subset, pattern sets, haystacks,
and helpers to compile them with boostfsm and with Hyperscan (the oracle)."""

from __future__ import annotations

from hypothesis import strategies as st

from parafuse.fsm_compiler.compiled import CompiledMachine
from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import SourceFile

HAYSTACK_BYTES = b"abcAB1 \n\x0b\xe9-"
_LITERALS = ["a", "b", "c", "A", "B", "1", " ", "\\n", "\\x0b", "\\xe9", "\\-", "-", "\\."]
_CLASSES = ["[ab]", "[^a]", "[a-c]", "[^\\n]", "[A-Z1]", "[-a]", "[b-]", "[^ab\\s]", "\\d",
            "\\w", "\\s", "\\W", "\\S", "\\D", ".", "[\\x00-\\x7f]", "[]a]"]
_QUANTIFIERS = ["*", "+", "?", "{2}", "{1,}", "{0,2}", "{1,3}", "*?", "+?", "??", "{2,3}?"]


def _atoms(depth: int) -> st.SearchStrategy[str]:
    simple = st.sampled_from(_LITERALS) | st.sampled_from(_CLASSES)
    if depth <= 0:
        return simple
    inner = _alternation(depth - 1)
    groups = st.builds(lambda body, capture: f"({body})" if capture else f"(?:{body})",
                       inner, st.booleans())
    return simple | groups


def _piece(depth: int) -> st.SearchStrategy[str]:
    quantifier = st.sampled_from([""] * 4 + _QUANTIFIERS)
    return st.builds(lambda atom, q: atom + q, _atoms(depth), quantifier)


def _sequence(depth: int) -> st.SearchStrategy[str]:
    return st.lists(_piece(depth), min_size=1, max_size=3).map("".join)


def _alternation(depth: int) -> st.SearchStrategy[str]:
    return st.lists(_sequence(depth), min_size=1, max_size=2).map("|".join)


def _top_alternative() -> st.SearchStrategy[str]:
    """A sequence ending in a byte that must match, so it never matches the empty string."""
    last = st.builds(lambda atom, q: atom + q, st.sampled_from(_LITERALS + _CLASSES),
                     st.sampled_from(["", "+", "{2}", "+?"]))
    return st.builds(lambda anchor, body, end: anchor + body + end,
                     st.sampled_from(["", "", "", "^"]),
                     st.lists(_piece(1), max_size=3).map("".join), last)


regexes = st.lists(_top_alternative(), min_size=1, max_size=2).map("|".join)
flags = st.sampled_from(["", "", "i", "s", "is"])
pattern_sets = st.lists(st.tuples(regexes, flags), min_size=1, max_size=3)
haystacks = st.lists(st.sampled_from(HAYSTACK_BYTES), max_size=300).map(bytes)


MAX_STATES = 3000  # random sets past this are skipped: they test nothing more, slowly


def pattern_set_source(patterns: list[tuple[str, str]]) -> str:
    lines = [f"    t{index} /{regex}/{flag}" for index, (regex, flag) in enumerate(patterns)]
    return (f"options {{ max_states {MAX_STATES} }}\npatterns p {{\n" + "\n".join(lines)
            + "\n}\n")


def compile_patterns(patterns: list[tuple[str, str]]):
    """The minimal DFA of `patterns`, or None when it needs more than MAX_STATES states
    (then it compiles to several engines: tests/property/test_fsm_engine_sets.py)."""
    machine = compile_file(SourceFile("p.fsm", pattern_set_source(patterns))).machines[0]
    return machine if isinstance(machine, CompiledMachine) else None


def hyperscan_matches(patterns: list[tuple[str, str]], data: bytes) -> list[tuple[int, int]]:
    """Every (end offset, pattern index) Hyperscan reports in block mode, once each."""
    import hyperscan

    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    hs_flags = [(hyperscan.HS_FLAG_CASELESS if "i" in flag else 0)
                | (hyperscan.HS_FLAG_DOTALL if "s" in flag else 0) for _, flag in patterns]
    database.compile(expressions=[regex.encode("latin-1") for regex, _ in patterns],
                     ids=list(range(len(patterns))), elements=len(patterns), flags=hs_flags)
    found: set[tuple[int, int]] = set()

    def on_match(pattern_id, start, end, match_flags, context):
        found.add((end, pattern_id))

    database.scan(data, match_event_handler=on_match)
    return sorted(found)
