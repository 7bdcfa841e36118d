"""Extents as polynomials (ccn_compiler/dims.py): one canonical form, so that equal extents
compare equal however they are written; their values and C++ expressions."""

from __future__ import annotations

from parafuse.ccn_compiler import dims
from parafuse.ccn_compiler.frontend import check_source


def _shape(text: str) -> tuple:
    source = f"program p(T, H, E) {{\n    input x: f32[{text}] replicated\n    output x\n}}\n"
    return check_source(source, "p.ccn").programs["p"].tensor("x").type.shape


def test_ways_of_writing_one_extent_are_equal() -> None:
    assert _shape("H * E") == _shape("E * H") == (dims.multiply("E", "H"),)
    assert _shape("2 * (T + 1)") == _shape("2 * T + 2") == _shape("T + 2 + T")
    assert _shape("H * E") != _shape("H * E + 1")
    assert _shape("T, 1 * H, 3") == ("T", "H", 3)  # plain variables and integers stay so


def test_values_text_and_cpp() -> None:
    [extent] = _shape("3 * H * E + T * T + 4")
    assert str(extent) == "4 + 3 * E * H + T * T"
    assert dims.value(extent, {"T": 5, "H": 2, "E": 7}) == 4 + 3 * 2 * 7 + 25
    assert dims.cpp(extent, {"T": "t_", "H": "h_", "E": "e_"}) == \
        "(int64_t{4} + int64_t{3} * e_ * h_ + t_ * t_)"
    assert dims.product(["T", 2, dims.add("H", 1)]) == _shape("2 * T * H + 2 * T")[0]
