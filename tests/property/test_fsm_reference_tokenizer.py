"""The reference tokenizer (the oracle of token sets) against maximal munch computed from
Hyperscan's anchored matches, over generated token sets and inputs."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from parafuse.fsm_compiler.tokens.reference_tokenizer import tokenize
from tests.required_tools import require_module

from .fsm_token_strategies import compile_tokens, hyperscan_tokens, token_inputs, token_rules

require_module("hyperscan", module_level=True)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(token_rules, token_inputs)
def test_reference_tokenizer_is_maximal_munch(rules, data) -> None:
    token_set = compile_tokens(rules)
    if token_set is None:
        return
    assert tokenize(token_set, data) == hyperscan_tokens(rules, data)


def test_backing_up_ties_skips_and_error_runs() -> None:
    rules = [(False, "abc", ""), (False, "[a-c]+", ""), (False, "a(bc)*d", ""),
             (True, " +", "")]
    token_set = compile_tokens(rules)
    data = b"abc abcbcd abcbc x?a"
    expected = [(0, 0, 3), (2, 4, 10), (1, 11, 16), (3, 17, 19), (1, 19, 20)]
    assert tokenize(token_set, data) == expected == hyperscan_tokens(rules, data)
