"""How many rounds `auto`'s first rule times its kernels (cpp_runtime/fsm/auto/rate_rounds.hpp),
checked as functions, without timing anything: tests/property/test_fsm_auto_cost.py runs the
rule itself, where the machine's load decides how many rounds a run takes."""

from __future__ import annotations

from pathlib import Path

from tests.unit.cpp_programs import assert_prints_ok


def test_rounds_stop_where_two_agree_and_fit_the_input(tmp_path: Path) -> None:
    assert_prints_ok("rate_rounds", tmp_path, ["-O1", "-Wall", "-Werror"])
