"""Every C++ scheme at 1, 2 and 3 threads and chunk counts up to one chunk per byte gives
the reference tokenizer's token list and counts: generated token sets (overlapping rules,
priority ties, skip rules, rules that back up) over generated inputs, and inputs made to
be hard for parallel tokenizing (boundaries inside comments, strings and long tokens,
inputs that never fall in step, inputs that back up at every byte, empty and one byte),
and the sample lexers over generated inputs."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import SourceFile
from tests.required_tools import require_cxx

from .fsm_token_driver import assert_tokens_equal_reference, sample_cases
from .fsm_token_strategies import compiled_cases, token_set_cases

LEXER = r"""
tokens lexer {
    skip ws      /[ \t\n]+/
    skip comment /\/\*([^*]|\*+[^*\/])*\*+\//
    keyword      /if|else|while/
    ident        /[A-Za-z_][A-Za-z0-9_]*/
    string       /"([^"\\\n]|\\.)*"/
    number       /[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?/
    op           /[-+*\/=<>!]=?|&&|\|\||[(){};,]/
}
tokens backs_up {
    a      /a/
    ab     /a*b/
    quote  /"[^"]*"/
}
tokens loops {
    skip ws /[ \t\n]+/
    comment /\/\*([^*]|\*+[^*\/])*\*+\//
    line    /#[^\n]*/
    pair    /'[^'\n]*'/
    string  /"([^"\\\n]|\\.)*"/
    rest    /@.*/s
    angle   /<[^>\n\\\t]*>/
    ident   /[A-Za-z_][A-Za-z0-9_]*/
}
"""


def lexer_token_sets():
    return {m.name: m for m in compile_file(SourceFile("lexer.fsm", LEXER)).machines}


def hard_inputs() -> list[tuple[str, bytes]]:
    program = b'if (x1 >= 2.5e3) { s = "a \\" /* b */"; } /* if "else */ while (y) x = x / 2;\n'
    strings = b'"a" "b c" "d" ' * 300  # a wrong start inside a string never falls in step
    return [
        ("lexer", b""), ("lexer", b"i"), ("lexer", b"\""), ("lexer", program * 40),
        ("lexer", b"/*" + b" comment that never ends " * 200),  # unterminated: backs up
        ("lexer", b"x" * 3000 + b" " + b"9" * 2000),  # tokens longer than many chunks
        ("lexer", strings), ("lexer", b"\"" + b"a" * 4000),  # one error, then an ident
        ("backs_up", b"a" * 1500),  # every token reads to the end and backs up
        ("backs_up", b"a" * 3000 + b"b" + b"\"x" * 200),
    ]


def _self_loop_inputs() -> list[tuple[str, bytes]]:
    """Every kind of self-loop the tokenizer passes over without its table walk
    (fsm/tokens/accel.hpp): a comment's body (one exit byte), a line (one), a quoted pair
    (two), a string (three), identifiers and whitespace (scanned, as is an angle's body,
    which 4 bytes leave), a rule that lasts to the end; each exit at every offset of a
    16-byte block, next to the input's end, and loops left unclosed there."""
    body = b"".join(b"/*" + b"c" * k + b"*/ x" + b"y" * k + b" #" + b"l" * k + b"\n '" +
                    b"p" * k + b"' \"" + b"s" * k + b"\\\"" + b"t" * (k % 5) + b"\" <" +
                    b"a" * k + b"\\b> <" + b"c" * k + b"> "
                    for k in range(40))
    ends = [b"/* no end" + b"x" * k for k in (0, 15, 16, 17, 40)]
    ends += [b"'" + b"p" * k for k in (14, 16, 33)] + [b"\"" + b"s" * 31]
    return ([("loops", body), ("loops", body + b"@" + body), ("loops", b"@")] +
            [("loops", body[: 97 * k] + end) for k, end in enumerate(ends)])


def test_self_loops_every_scheme_equals_reference(tmp_path) -> None:
    require_cxx()
    token_sets = lexer_token_sets()
    assert_tokens_equal_reference([(token_sets[name], data) for name, data in
                                   _self_loop_inputs()], tmp_path)


def test_hard_inputs_every_scheme_equals_reference(tmp_path) -> None:
    require_cxx()
    token_sets = lexer_token_sets()
    cases = [(token_sets[name], data) for name, data in hard_inputs()]
    assert_tokens_equal_reference(cases, tmp_path)


@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(token_set_cases)
def test_random_token_sets_every_scheme_equals_reference(tmp_path, generated) -> None:
    require_cxx()
    cases = compiled_cases(generated)
    if cases:
        assert_tokens_equal_reference(cases, tmp_path)


def test_samples_every_scheme_equals_reference(tmp_path) -> None:
    require_cxx()
    assert_tokens_equal_reference(sample_cases(), tmp_path)
