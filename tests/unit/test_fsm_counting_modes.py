"""Counting visits of reporting states (cpp_runtime/fsm/core/count.hpp) from a first block
in any mode: the counts stay exact, and the mode the walk settled in is left where asked
(auto's timed walks count in it from their first byte: cpp_runtime/fsm/auto/rates.hpp)."""

from __future__ import annotations

from tests.unit.cpp_programs import assert_prints_ok


def test_counts_do_not_depend_on_the_first_blocks_mode(tmp_path) -> None:
    assert_prints_ok("counting_modes", tmp_path, ["-O1", "-Wall", "-Werror"])
