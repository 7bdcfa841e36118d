"""Fuzz: mutated .fsm files and regexes compile or fail with a located CompileError;
no other exception ever escapes (it would reach a user as a traceback)."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import CompileError, SourceFile
from tests.conftest import REPO, SAMPLES

SEEDS = [path.read_text(encoding="latin-1") for path in sorted(SAMPLES.glob("*.fsm"))
         if path.stat().st_size < 4000]
SEEDS += [path.read_text(encoding="latin-1")
          for path in sorted((REPO / "tests" / "diagnostics" / "fsm").glob("*.fsm"))]
TOKEN = re.compile(r"\s+|[A-Za-z_][A-Za-z0-9_]*|0x[0-9a-fA-F]+|'(?:\\.|[^'\n])*'|"
                   r"/(?:\\.|[^/\n])*/[a-z]*|\.\.|->|.", re.S)
REGEX_SEEDS = [r"\d{1,3}\.\d{1,3}", r"union\s+(all\s+)?select", r"^#[^\n]*", r"[^a-c\]]+x",
               r"(?:ab|c){2,5}?d", r"[\x00-\x1f]\W\S", r"a.b|^c+",
               r"(?i)\bfoo(?-i:Bar)\b$", r"(?m)^\p{Lu}[[:^alpha:]]\P{^N}\z", r"\Qa*\E\x{41}\o{7}",
               r"(?x) a b # c\n [d ]+ \Z", r"(?<n>\cA|\101)(?P<m>\h\v)\A"]
# Compile quickly whatever the mutation: small limits through the command-line overrides.
LIMITS = {"max_states": 500, "max_fused_states": 100}


def _mutate(tokens: list[str], operations: list[tuple[int, int, int, str]]) -> str:
    for kind, first, second, junk in operations:
        if not tokens:
            break
        i, j = first % len(tokens), second % len(tokens)
        if kind == 0:
            del tokens[i]
        elif kind == 1:
            tokens.insert(j, tokens[i])
        elif kind == 2:
            tokens[i], tokens[j] = tokens[j], tokens[i]
        else:
            tokens.insert(i, junk)
    return "".join(tokens)


operations = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 10_000),
                                st.integers(0, 10_000),
                                st.text(st.characters(max_codepoint=255), max_size=3)),
                      min_size=1, max_size=6)


def _compiles_or_located_error(text: str) -> None:
    try:
        compile_file(SourceFile("fuzz.fsm", text), LIMITS)
    except CompileError as error:
        assert error.location is not None, error.message
        lines = max(1, text.count("\n") + 1)
        assert 1 <= error.location.line <= lines, (error.location, text)
        error.render()


@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SEEDS), operations)
def test_mutated_fsm_files_give_located_errors(seed: str, mutation) -> None:
    _compiles_or_located_error(_mutate(TOKEN.findall(seed), mutation))


@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(REGEX_SEEDS), operations, st.sampled_from(["", "i", "s", "is"]))
# \d{1,3200}: an NFA engine of ~3200 positions, whose longest-match walk recursed
@example(REGEX_SEEDS[0], [(3, 15, 0, "200")], "").via("a RecursionError random seeds found")
def test_mutated_regexes_give_located_errors(seed: str, mutation, flags: str) -> None:
    regex = _mutate(list(seed), mutation).replace("\n", "")
    _compiles_or_located_error(f"patterns p {{\n    t /{regex}/{flags}\n}}\n")
