"""The token-set samples (samples/tokens): each says what it is, compiles, and lexes as
its comment promises (checked with the reference tokenizer)."""

from __future__ import annotations

import pytest

from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.fsm_compiler.tokens.reference_tokenizer import tokenize
from parafuse.grammar.diagnostics import SourceFile
from tests.conftest import SAMPLES

TOKEN_SAMPLES = sorted((SAMPLES / "tokens").glob("*.fsm"))


def _lex(name: str, data: bytes) -> list[tuple[str, bytes]]:
    path = SAMPLES / "tokens" / f"{name}.fsm"
    token_set = compile_file(SourceFile(str(path), path.read_text())).machines[0]
    return [(token_set.kind_names[kind], data[start:end])
            for kind, start, end in tokenize(token_set, data)]


@pytest.mark.parametrize("path", TOKEN_SAMPLES, ids=[p.stem for p in TOKEN_SAMPLES])
def test_sample_says_what_it_is_and_compiles(path) -> None:
    assert path.read_text().startswith("# ")
    machines = compile_file(SourceFile(str(path), path.read_text())).machines
    assert [m.kind for m in machines] == ["tokens"] and machines[0].name == path.stem


def test_c_lexer_keywords_longest_operators_skips() -> None:
    source = b'#define MAX(a) \\\n  (a)\nif (iffy >>= 0x1fUL) /* c */ s = "a\\"b"; // x\n@'
    assert _lex("clexer_tokens", source) == [
        ("keyword", b"if"), ("punct", b"("), ("identifier", b"iffy"), ("operator", b">>="),
        ("number", b"0x1fUL"), ("punct", b")"), ("identifier", b"s"), ("operator", b"="),
        ("string", b'"a\\"b"'), ("punct", b";"), ("error", b"@")]


def test_json_and_log_lexers() -> None:
    assert _lex("json_tokens", b'{"a": [-1.5e3, true]} tru') == [
        ("punct", b"{"), ("string", b'"a"'), ("punct", b":"), ("punct", b"["),
        ("number", b"-1.5e3"), ("punct", b","), ("literal", b"true"), ("punct", b"]"),
        ("punct", b"}"), ("error", b"tru")]
    line = b'2024-10-10T13:01:02Z WARN [w-1] 10.0.0.1 user=u7 "GET /" 200\n'
    assert [kind for kind, _ in _lex("log_tokens", line)] == [
        "timestamp", "level", "bracketed", "ipv4", "pair", "quoted", "number", "newline"]
