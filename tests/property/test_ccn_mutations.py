"""Mutated .ccn programs give success or one located CompileError, never anything else."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parafuse.ccn_compiler.frontend import check_source
from parafuse.grammar.diagnostics import CompileError
from tests.conftest import SAMPLES

SAMPLE_TEXTS = [p.read_text() for p in sorted(SAMPLES.glob("*.ccn"))]
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+\.?\d*(?:[eE][+-]?\d+)?|\S")


def _tokens(text: str) -> list[str]:
    return TOKEN.findall(re.sub(r"#[^\n]*", "", text))


@st.composite
def mutated_programs(draw) -> str:
    tokens = _tokens(draw(st.sampled_from(SAMPLE_TEXTS)))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["delete", "duplicate", "swap", "replace", "bytes"]))
        i = draw(st.integers(0, len(tokens) - 1))
        if kind == "delete" and len(tokens) > 1:
            del tokens[i]
        elif kind == "duplicate":
            tokens.insert(i, tokens[i])
        elif kind == "swap":
            j = draw(st.integers(0, len(tokens) - 1))
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif kind == "replace":
            tokens[i] = draw(st.sampled_from(tokens))
        else:
            tokens.insert(i, draw(st.text(min_size=1, max_size=4)))
    return " ".join(tokens)


def _assert_located_or_ok(text: str) -> None:
    try:
        check_source(text, "fuzz.ccn")
    except CompileError as error:
        assert error.location is not None, error.message
        assert error.location.file == "fuzz.ccn"
        assert 1 <= error.location.line and 1 <= error.location.column
        rendered = error.render()
        assert rendered.startswith(f"fuzz.ccn:{error.location.line}:{error.location.column}: "
                                   "error: ")
        assert "Token(" not in rendered and "Tree(" not in rendered


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_programs())
def test_mutated_programs_fail_cleanly(text: str) -> None:
    _assert_located_or_ok(text)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_fail_cleanly(data: bytes) -> None:
    _assert_located_or_ok(data.decode("latin-1"))
