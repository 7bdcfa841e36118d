"""Pipeline stages in generated projects: each rank runs its own stage's statements only,
writes only the values its stage holds, and computes what the reference does
(samples/pipeline.ccn: two stages of R/2 ranks, each a tensor-parallel MLP block;
PARAFUSE_COUNT_WORK=1 makes every rank print the matmul flops it ran)."""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from parafuse.ccn_compiler.frontend import check_source
from parafuse.ccn_compiler.printer import format_program
from parafuse.ccn_compiler.ranks import block_range
from parafuse.ccn_compiler.reference.tolerances import assert_close
from parafuse.emitters.ccn.cpu.project import build_cpu_project
from parafuse.emitters.toolchain.cmake import Toolchain
from parafuse.emitters.toolchain.mpirun import launch_environment, run_ranks
from tests.backend_compare import assert_backend_matches_reference, sample_module, sample_project
from tests.cuda_emulation.emulated_project import build_emulated, build_emulated_python
from tests.e2e.ccn_programs import STAGED

SIZES = {"B": 7, "D": 11, "F": 13, "G": 9}
STEPS = 2
WORK_LINE = re.compile(r"^work: rank (\d+) matmul_flops (\d+)$", re.M)


def expected_flops(ranks: int) -> dict[int, int]:
    """Each step, rank i of stage k multiplies [B, D] by its columns of W_in ([D, F_i])
    and its [B, F_i] by its rows of W_out: 4 B D F_i flops, F being F on stage 0 and G
    on stage 1."""
    half = ranks // 2
    flops = {}
    for rank in range(ranks):
        hidden = SIZES["F"] if rank < half else SIZES["G"]
        start, stop = block_range(hidden, half, rank % half)
        flops[rank] = STEPS * 4 * SIZES["B"] * SIZES["D"] * (stop - start)
    return flops


def run_counting(project, ranks: int, schedule: str, out, monkeypatch) -> dict[int, int]:
    monkeypatch.setenv("PARAFUSE_COUNT_WORK", "1")
    args = ["--schedule", schedule, "--random", "--warmup", "0", "--iters", str(STEPS),
            "--outputs", str(out)] + [a for n, v in SIZES.items() for a in ("--size", f"{n}={v}")]
    done = run_ranks(project, "pipeline", ranks, args)
    assert done.returncode == 0, done.stderr
    return {int(rank): int(flops) for rank, flops in WORK_LINE.findall(done.stderr)}


def assert_only_stage_one_writes(out, ranks: int) -> None:
    manifest = json.loads((out / "manifest.json").read_text())
    holders = [f"out.rank{r}.npy" for r in range(ranks // 2, ranks)]
    assert [(e["name"], e["files"], e["stage"]) for e in manifest["outputs"]] == \
        [("out", holders, "stage[1]")]
    assert sorted(p.name for p in out.iterdir()) == sorted(holders + ["manifest.json"])


@pytest.mark.parametrize("schedule", ["default", "fused", "overlapped", "gpipe"])
def test_cpu_ranks_run_only_their_stage(schedule: str, tmp_path, monkeypatch) -> None:
    """At R = 4: two ranks a stage, each with its block of the stage's weights."""
    counted = run_counting(sample_project("pipeline"), 4, schedule, tmp_path, monkeypatch)
    assert counted == expected_flops(4), schedule
    assert_only_stage_one_writes(tmp_path, 4)


def test_cuda_emulated_ranks_run_only_their_stage(tmp_path, monkeypatch) -> None:
    """At R = 2 (the emulated device runs up to 3 ranks): a rank a stage."""
    module = sample_module("pipeline")
    schedules = module.schedule_names("pipeline")
    project = build_emulated(module, "pipeline", schedules)
    for schedule in ("default", "gpipe"):
        out = tmp_path / schedule
        assert run_counting(project, 2, schedule, out, monkeypatch) == expected_flops(2)
        assert_only_stage_one_writes(out, 2)


@functools.cache
def staged_project(backend: str) -> Path:
    """STAGED's project with its Python module (and runner), built once per content."""
    module = check_source(STAGED, "staged.ccn")
    if backend == "cpu":
        return build_cpu_project(module, "staged", ["default"], "staged test", python=True)
    return build_emulated_python(module, "staged", ["default"])


def test_placed_values_collectives_and_states_match_the_reference(tmp_path,
                                                                   monkeypatch) -> None:
    """STAGED through the CPU backend (R = 2, 4) and the emulated CUDA one (R = 2), sizes
    that neither stage's ranks divide: the shown program parses back to the same types."""
    module = check_source(STAGED, "staged.ccn")
    program = module.programs["staged"]
    again = check_source(format_program(program), "shown.ccn").programs["staged"]
    assert [(s.name, s.type) for s in again.flat_stages()] == \
        [(s.name, s.type) for s in program.flat_stages()]
    sizes = {"B": 5, "H": 7}
    for ranks in (2, 4):
        assert_backend_matches_reference(staged_project("cpu"), program, program, "default",
                                         ranks, sizes, tmp_path / f"cpu-{ranks}")
    monkeypatch.setenv("PF_EMU_LAZY", "odd")
    assert_backend_matches_reference(staged_project("cuda-emulated"), program, program,
                                     "default", 2, sizes, tmp_path / "emulated")


def test_overlaps_of_two_stages_choose_their_chunks_apart(tmp_path, monkeypatch) -> None:
    """pipeline.ccn's `overlapped` measures 1, 2 and 4 chunks over its first 6 steps, then
    the ranks agree on the fastest: each stage's ranks among themselves (agreeing over
    every rank deadlocked: stage 0 waited in the agreement, stage 1 for stage 0's send)."""
    monkeypatch.setenv("PARAFUSE_RUN_TIMEOUT", "60")  # a deadlock fails in a minute
    module = sample_module("pipeline")
    overlapped = module.scheduled_program("pipeline", "overlapped")
    assert_backend_matches_reference(sample_project("pipeline"), module.programs["pipeline"],
                                     overlapped, "overlapped", 2, SIZES, tmp_path, iters=8)


@pytest.mark.parametrize("backend", ["cpu", "cuda-emulated"])
def test_python_module_of_a_pipeline_takes_and_gives_what_each_rank_holds(backend: str,
                                                                           tmp_path) -> None:
    """STAGED's `--python` module on 2 ranks (a stage each) under mpirun with mpi4py (the
    CUDA one with numpy tensors on the emulated device): rank 0 takes x, w and g and
    returns s and own; rank 1 takes x and acc and returns full and acc; the values equal the
    reference's (`coconetc run` on the same inputs)."""
    project = staged_project(backend)
    rng = np.random.default_rng(2)
    ins = tmp_path / "in"
    ins.mkdir()
    for name, shape in (("x", (5, 7)), ("w", (7, 7)), ("acc", (5, 7))):
        np.save(ins / f"{name}.npy", rng.uniform(-1, 1, shape).astype(np.float32))
    for rank in (0, 1):
        np.save(ins / f"g.rank{rank}.npy", rng.uniform(-1, 1, (5, 7)).astype(np.float32))
    script = Path(__file__).parent / "python_module" / "step_staged.py"
    done = subprocess.run([Toolchain.current().tool("mpirun"), "--oversubscribe", "-np", "2",
                           sys.executable, str(script), str(project / "build"), str(ins),
                           str(tmp_path / "py"), backend.split("-")[0]],
                          capture_output=True, text=True,
                          env=launch_environment(2), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    names = [json.loads((tmp_path / "py" / f"names.rank{r}.json").read_text()) for r in (0, 1)]
    assert names == [{"tensors": ["g", "w", "x"], "results": ["own", "s"]},
                     {"tensors": ["acc", "x"], "results": ["acc", "full"]}], names
    (tmp_path / "staged.ccn").write_text(STAGED)
    reference = subprocess.run(
        [str(Path(sys.executable).parent / "coconetc"), "run", "staged.ccn", "-n", "2",
         "--size", "B=5", "--size", "H=7", "--inputs", str(ins), "--outputs", "ref",
         "--seed", "3"], cwd=tmp_path, capture_output=True, text=True)
    assert reference.returncode == 0, reference.stderr
    for rank, result in ((0, "s"), (0, "own"), (1, "full"), (1, "acc")):
        assert_close(np.load(tmp_path / "py" / f"{result}.rank{rank}.npy"),
                     np.load(tmp_path / "ref" / f"{result}.rank{rank}.npy"), "f32", result)
