"""The CPU softmax's vectorised exp (cpp_runtime/ccn/cpu/math.hpp) is libm's within 2 ulp
over [-87, 0], 0 below and at -inf, NaN at NaN, and softmax_rows keeps PyTorch's masked
semantics (tests/unit/cpp/softmax_exp.cpp)."""

from __future__ import annotations

from pathlib import Path

from tests.unit.cpp_programs import assert_prints_ok


def test_softmax_exp_matches_libm_and_masks(tmp_path: Path) -> None:
    assert_prints_ok("softmax_exp", tmp_path, ["-O2"])
