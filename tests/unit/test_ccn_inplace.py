"""Which states take their next value in place (emitters/ccn_inplace.py)."""

from __future__ import annotations

from parafuse.ccn_compiler.frontend import check_source
from parafuse.emitters.ccn.in_place import in_place_values
from tests.backend_compare import sample_module


def _program(body: str):
    text = ("program p(N) {\n  input g: f32[N] replicated\n  state a: f32[N] replicated\n"
            f"  state b: f32[N] replicated\n{body}\n}}\n")
    return check_source(text, "p.ccn").programs["p"]


def test_adam_updates_every_state_in_place_and_zero_its_moments() -> None:
    module = sample_module("adam")
    assert in_place_values(module.programs["adam"]) == {"m1": "m", "v1": "v", "w1": "w"}
    # zero: w's next value is gathered (a collective), the sliced moments are loops
    assert in_place_values(module.scheduled_program("adam", "zero")) == {"m1": "m", "v1": "v"}
    # sliced: the moments' next values are gathers of sliced loops, held differently
    assert in_place_values(module.scheduled_program("adam", "sliced")) == {}


def test_a_state_read_after_its_update_keeps_two_buffers() -> None:
    program = _program("  a1 = update(a, a + g)\n  b1 = update(b, b + a)")
    # `b1` reads the old `a` after `a1` is computed: `a1` must not overwrite it
    assert in_place_values(program) == {"b1": "b"}


def test_an_output_or_a_state_read_by_a_reduction_later_is_not_in_place() -> None:
    program = _program("  a1 = update(a, a * 2)\n  b1 = update(b, b + sum(a))")
    assert "a1" not in in_place_values(program)
    program = _program("  a1 = update(a, a * 2)\n  s = a1 + 1\n  b1 = update(b, b + g)\n"
                       "  output a1")
    assert "a1" not in in_place_values(program)
    assert in_place_values(program)["b1"] == "b"
