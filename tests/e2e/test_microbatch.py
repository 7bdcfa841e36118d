"""Rows cut into chunks through the CPU backend (both transports of its allreduce) and the
emulated CUDA one, against the reference, 3 chunks of 7 rows at R = 1..3, one step (a
later one would find the last step's values, the same, in the buffers): MICROBATCHED's
`mb` (a micro-batched run that is no pipeline) and `piped` (an overlap whose consumer
normalises the producer's rows). (samples/pipeline.ccn's `gpipe` and samples/send_ring.ccn's
`microbatched` run with every sample schedule.)"""

from __future__ import annotations

import pytest

from parafuse.ccn_compiler.frontend import check_source
from parafuse.emitters.ccn.cpu.project import build_cpu_project
from tests.backend_compare import assert_backend_matches_reference
from tests.cuda_emulation.emulated_project import build_emulated
from tests.e2e.ccn_programs import MICROBATCHED

SIZES = {"B": 7, "K": 5, "H": 6}
SCHEDULES = ["mb", "piped"]


def _check(project, ranks: int, out) -> None:
    module = check_source(MICROBATCHED, "mbatch.ccn")
    for schedule in SCHEDULES:
        assert_backend_matches_reference(project, module.programs["mbatch"],
                                          module.scheduled_program("mbatch", schedule),
                                          schedule, ranks, SIZES, out / schedule, iters=1)


@pytest.mark.parametrize("transport", ["shared", "mpi"])
def test_cpu_chunked_rows_match_the_reference(transport: str, tmp_path, monkeypatch) -> None:
    if transport == "mpi":
        monkeypatch.setenv("PARAFUSE_FUSED_TRANSPORT", "mpi")
    module = check_source(MICROBATCHED, "mbatch.ccn")
    project = build_cpu_project(module, "mbatch", SCHEDULES, "micro-batch test")
    assert "m = microbatch(part, ..., z): 3 micro-batches along dim 0" in \
        (project / "src" / "mbatch.cpp").read_text()
    for ranks in (1, 2, 3):
        _check(project, ranks, tmp_path / f"r{ranks}")


def test_emulated_chunked_rows_match_the_reference(tmp_path, monkeypatch) -> None:
    project = build_emulated(check_source(MICROBATCHED, "mbatch.ccn"), "mbatch", SCHEDULES)
    for ranks, lazy in ((1, "none"), (2, "odd"), (3, "even")):
        monkeypatch.setenv("PF_EMU_LAZY", lazy)
        _check(project, ranks, tmp_path / f"r{ranks}-{lazy}")
