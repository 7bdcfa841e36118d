"""A step's time is the device's: every clock of the CUDA backend stops only once the work
a step queued has run. On the emulated device with every stream late (PF_EMU_LAZY=all: work
runs only when something waits for it) and each operation taking OPERATION_MS
(PF_EMU_OPERATION_US), a step whose clock stops at the end of `step()` measures only the
queueing, well under a millisecond; a true step time is at least its operations times
OPERATION_MS. The runner's own median (`--json`) and `coconetc run`'s are checked."""

from __future__ import annotations

import json

import pytest

from parafuse.emitters.toolchain.mpirun import run_ranks
from tests.backend_compare import sample_module
from tests.cuda_emulation.emulated_project import build_emulated
from tests.e2e.test_cuda_emulated_counts import step_counts

OPERATION_MS = 4


@pytest.mark.parametrize(("sample", "schedule", "ranks", "sizes"), [
    ("adam", "default", 2, {"N": 1021}),
    ("megatron", "overlapped", 2, {"B": 8, "K": 12, "H": 10}),
])
def test_the_runner_times_a_step_until_the_device_has_done_it(
        sample, schedule, ranks, sizes, tmp_path, monkeypatch) -> None:
    module = sample_module(sample)
    project = build_emulated(module, sample, module.schedule_names(sample))
    operations = min(step["operations"] for step in step_counts(
        project, sample, schedule, ranks, sizes, tmp_path, monkeypatch))
    assert operations >= 2, operations
    monkeypatch.delenv("PF_EMU_COUNTS")
    monkeypatch.setenv("PF_EMU_LAZY", "all")
    monkeypatch.setenv("PF_EMU_OPERATION_US", str(OPERATION_MS * 1000))
    args = ["--schedule", schedule, "--random", "--iters", "3", "--warmup", "1", "--json"]
    args += [a for name, value in sizes.items() for a in ("--size", f"{name}={value}")]
    done = run_ranks(project, sample, ranks, args)
    assert done.returncode == 0, done.stderr
    median_ms = json.loads(done.stdout.strip().splitlines()[-1])["median_ms"]
    assert median_ms >= operations * OPERATION_MS, (median_ms, operations)
