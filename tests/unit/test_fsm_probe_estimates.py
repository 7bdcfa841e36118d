"""auto's probes (cpp_runtime/fsm/auto/probe.hpp, tests/unit/cpp/probe_estimates.cpp): the
fitted per-byte rate stays within its bounds, spec and hspec are probed as one job, the
rounds stop where they decided, and one prediction and walk gives spec's and hspec's phases
as each scheme's own run has them."""

from __future__ import annotations

from tests.unit.cpp_programs import assert_prints_ok


def test_probe_estimates_jobs_and_the_paired_run(tmp_path) -> None:
    assert_prints_ok("probe_estimates", tmp_path, ["-O1", "-Wall", "-Werror", "-fopenmp"])
