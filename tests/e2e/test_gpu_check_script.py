"""bench/gpu_check.py, the script a session lent a GPU runs, as a dry run on the emulated
device: it builds, compares every sample and schedule with the reference at one rank,
times the fused optimizers and prints its table, so that the GPU's minutes go to the
GPU."""

from __future__ import annotations

import subprocess
import sys

from tests.backend_compare import sample_module
from tests.conftest import REPO
from tests.e2e.sample_cases import CASES


def _one_rank_schedules() -> int:
    """Schedules of the samples whose groups fit on one rank (those gpu_check runs)."""
    count = 0
    for sample in CASES:
        module = sample_module(sample)
        if not any(group.blocks > 1 for group in module.programs[sample].groups):
            count += len(module.schedule_names(sample))
    return count


def test_gpu_check_runs_on_the_emulated_device() -> None:
    done = subprocess.run([sys.executable, str(REPO / "bench" / "gpu_check.py"), "--emulated"],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    table = done.stdout[done.stdout.index("CUDA backend GPU check on the emulated device"):]
    rows = [line.split()[:3] for line in table.splitlines()[2:] if line.strip()]
    assert "FAILED" not in table, table
    assert sum(row[2:3] == ["equal"] for row in rows) == _one_rank_schedules(), table
    assert [row[0] for row in rows if row[1] == "fused" and row[2:3] != ["equal"]] == [
        "sgd", "adam", "lamb"], table
