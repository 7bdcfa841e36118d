"""Hypothesis strategies for token sets (overlapping rules, priority ties, skip rules,
rules that back up), and maximal munch computed with Hyperscan as an independent oracle."""

from __future__ import annotations

from hypothesis import strategies as st

from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import CompileError, SourceFile

from .fsm_regex_strategies import (
    HAYSTACK_BYTES,
    assertion_free_regexes,
    flags,
    hyperscan_refusal,
)

MAX_STATES = 2000

# Rules that back up (`a(bc)*d` reads past its last accept), tie with earlier rules
# (`[a-c]+` against `abc`), or never end before the input does (`"[^"]*"`).
_HANDWRITTEN = [r"a(bc)*d", r"abc", r"[a-c]+", r"ab|abcab", r"-[^-]*-", r"1+\.1+", r"\s+",
                r"[^ ]{3}"]


token_regexes = st.sampled_from(_HANDWRITTEN) | assertion_free_regexes  # rules refuse assertions
token_rules = st.lists(st.tuples(st.booleans(), token_regexes, flags), min_size=1, max_size=4)
token_inputs = st.lists(st.sampled_from(HAYSTACK_BYTES + b"dc1.--"), max_size=60).map(bytes)


def token_set_source(rules: list[tuple[bool, str, str]], name: str = "t") -> str:
    lines = [f"    {'skip ' if skip else ''}k{index} /{regex}/{flag}"
             for index, (skip, regex, flag) in enumerate(rules)]
    return (f"options {{ max_states {MAX_STATES} }}\ntokens {name} {{\n" + "\n".join(lines)
            + "\n}\n")


def compile_tokens(rules: list[tuple[bool, str, str]]):
    """The tokenizer of `rules`, or None when it needs more than MAX_STATES states, when a
    rule can match the empty string, or when Hyperscan refuses a rule's regex too (the
    refusals themselves are tested in test_regex_hyperscan.py)."""
    try:
        return compile_file(SourceFile("t.fsm", token_set_source(rules))).machines[0]
    except CompileError as error:
        if "DFA states" in error.message or "empty string" in error.message:
            return None
        if hyperscan_refusal([(regex, flag) for _, regex, flag in rules]) is not None:
            return None
        raise


# Token sets with a few inputs each (compiled_cases turns them into (token set, input) cases)
token_set_cases = st.lists(st.tuples(token_rules, st.lists(token_inputs, min_size=1,
                                                            max_size=3)), min_size=1, max_size=4)


def compiled_cases(generated) -> list:
    """(token set, input) for each generated set that compiles (compile_tokens)."""
    cases = []
    for rules, inputs in generated:
        token_set = compile_tokens(rules)
        if token_set is not None:
            cases += [(token_set, data) for data in inputs]
    return cases


def hyperscan_tokens(rules: list[tuple[bool, str, str]], data: bytes) -> list[tuple[int, int, int]]:
    """Maximal munch from Hyperscan's anchored matches: (kind, start, end), kinds numbered
    like kind_names (non-skip rules in order, then error)."""
    import hyperscan

    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    hs_flags = [(hyperscan.HS_FLAG_CASELESS if "i" in flag else 0)
                | (hyperscan.HS_FLAG_DOTALL if "s" in flag else 0)
                | (hyperscan.HS_FLAG_MULTILINE if "m" in flag else 0) for _, _, flag in rules]
    # \A, not ^: with flag m, ^ would also match after every newline of the rest
    expressions = [("(?x)" if "x" in flag else "") + f"\\A(?:{regex})"
                   for _, regex, flag in rules]
    database.compile(expressions=[text.encode("latin-1") for text in expressions],
                     ids=list(range(len(rules))), elements=len(rules), flags=hs_flags)

    def longest(position: int) -> tuple[int, int] | None:
        found: list[tuple[int, int]] = []
        database.scan(data[position:], match_event_handler=lambda rule, _s, end, _f, _c:
                      found.append((end, -rule)))
        if not found:
            return None
        end, rule = max(found)
        return position + end, -rule

    output, emitted = [], 0
    for skip, _, _ in rules:
        output.append(None if skip else emitted)
        emitted += not skip
    tokens, position = [], 0
    while position < len(data):
        match = longest(position)
        if match is None:
            end = position + 1
            while end < len(data) and longest(end) is None:
                end += 1
            tokens.append((emitted, position, end))
        else:
            end, rule = match
            if output[rule] is not None:
                tokens.append((output[rule], position, end))
        position = end
    return tokens
