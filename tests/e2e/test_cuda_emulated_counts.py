"""What one step of the CUDA backend's code costs, counted by the emulated device
(PF_EMU_COUNTS, cpp_runtime/ccn/cuda_emulated/README.md): device-memory bytes read and
written page by page, operations and runtime calls, allocations. A step's count is the
difference between runs of k + 1 and k steps, so that setting up and reading results cancel.

The fused Adam step at one rank must move its 26 bytes per element (the f16 gradient read,
the f32 weights and moments read and written) within 10%, and SGD's its 18: with the
collectives' memset, packing and copies (a mutant that sets PaddedChunks::in_whole to false,
or one without the one-rank aliases of emitters/ccn/cuda/fused.py) Adam moves about 64. No
step allocates once the first has run (a mutant that allocates the step's temporaries with
cudaMallocAsync, as the backend did before pf::StepArena, allocates 8 times a step)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from parafuse.emitters.toolchain.mpirun import run_ranks
from tests.backend_compare import sample_module
from tests.cuda_emulation.emulated_project import build_emulated

N = 1 << 18  # elements; the counts are page granular (4 KiB), so large enough to be exact
RUNNER_SYNCS = 1  # the runner waits for each step it times; the step itself never waits


def step_counts(project: Path, program: str, schedule: str, ranks: int, sizes: dict[str, int],
                tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, int]]:
    """Per rank, what one step of the steady state counts (k = 2)."""
    runs = []
    for iters in (2, 3):
        counts = tmp_path / f"counts{iters}"
        monkeypatch.setenv("PF_EMU_COUNTS", str(counts))
        args = ["--schedule", schedule, "--random", "--iters", str(iters), "--warmup", "0",
                "--outputs", str(tmp_path / f"out{iters}")]
        args += [a for name, value in sizes.items() for a in ("--size", f"{name}={value}")]
        done = run_ranks(project, program, ranks, args)
        assert done.returncode == 0, done.stderr
        runs.append([json.loads(Path(f"{counts}.rank{r}").read_text()) for r in range(ranks)])
    return [{key: after[key] - before[key] for key in after}
            for before, after in zip(runs[0], runs[1], strict=True)]


@pytest.mark.parametrize(("sample", "bound"), [("adam", 26), ("sgd", 18)])
def test_a_fused_optimizer_step_at_one_rank_moves_its_bytes_per_element(
        sample: str, bound: int, tmp_path, monkeypatch) -> None:
    """adam: the f16 gradient read, w, m, v read and written; sgd: the bf16 gradient, w and
    buf (sgd's `d` lives in registers: storing it, as the kernel did, moves 22)."""
    module = sample_module(sample)
    project = build_emulated(module, sample, module.schedule_names(sample))  # the cached one
    [step] = step_counts(project, sample, "fused", 1, {"N": N}, tmp_path, monkeypatch)
    per_element = (step["read"] + step["written"]) / N
    assert bound <= per_element <= bound * 1.10, step
    assert step["allocations"] == 0 and step["syncs"] == RUNNER_SYNCS, step
    assert step["calls"] <= 4, step  # one kernel: no collective, event or copy at one rank


def test_lambs_fused_step_reads_what_its_norms_need_once(tmp_path, monkeypatch) -> None:
    """lamb's fused step at one rank: the moments' phase reads g (f16), m, v and w and
    writes m, v and u, adding up the squares of w and u as it goes (the norms folded into
    its kernel, emitters/ccn/cuda/folded_reductions.py); the step's phase reads u and w and
    writes w: 38 bytes an element. With a kernel for each norm, reading w and u again, 46."""
    module = sample_module("lamb")
    project = build_emulated(module, "lamb", module.schedule_names("lamb"))
    [step] = step_counts(project, "lamb", "fused", 1, {"N": N}, tmp_path, monkeypatch)
    per_element = (step["read"] + step["written"]) / N
    assert 38 <= per_element <= 38 * 1.05, step
    assert step["allocations"] == 0 and step["syncs"] == RUNNER_SYNCS, step


def test_steps_allocate_nothing_once_the_first_has_run(tmp_path, monkeypatch) -> None:
    """lamb's fused schedule (scalar reductions and norms of the step, fused phases with
    padded chunks) and megatron's overlapped one (cuBLAS temporaries, chunk events) at two
    ranks: no allocation and no host synchronisation in a step once the first has run."""
    for sample, schedule in (("lamb", "fused"), ("megatron", "overlapped")):
        module = sample_module(sample)
        project = build_emulated(module, sample, module.schedule_names(sample))
        sizes = {n: {"N": 1021, "B": 8, "K": 12, "H": 10}[n]
                 for n in module.programs[sample].size_vars}
        for rank, step in enumerate(step_counts(project, sample, schedule, 2, sizes,
                                                tmp_path / sample, monkeypatch)):
            assert step["allocations"] == 0, f"{sample} {schedule} rank {rank}: {step}"
            assert step["syncs"] == RUNNER_SYNCS, f"{sample} {schedule} rank {rank}: {step}"
