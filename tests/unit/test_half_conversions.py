"""The runtime's branch-free f16/bf16 conversions (cpp_runtime/ccn/cpu/half.hpp) equal the
compiler's _Float16 conversions and round-to-nearest-even bfloat16: every f16 pattern,
and every 101st float pattern (all exponents, signs and rounding cases)."""

from __future__ import annotations

from pathlib import Path

from tests.unit.cpp_programs import assert_prints_ok


def test_half_conversions_are_exact(tmp_path: Path) -> None:
    assert_prints_ok("half_conversions", tmp_path, ["-O2", "-fno-math-errno"], ("101",))
