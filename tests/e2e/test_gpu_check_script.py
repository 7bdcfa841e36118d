"""bench/gpu_check.py, the script a session lent a GPU runs, as a dry run on the emulated
device: it builds, compares every sample and schedule with the reference at one rank,
times the fused optimizers and prints its table, so that the GPU's minutes go to the
GPU."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO


def test_gpu_check_runs_on_the_emulated_device() -> None:
    done = subprocess.run([sys.executable, str(REPO / "bench" / "gpu_check.py"), "--emulated"],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    table = done.stdout[done.stdout.index("CUDA backend GPU check on the emulated device"):]
    rows = [line.split()[:3] for line in table.splitlines()[2:] if line.strip()]
    assert "FAILED" not in table, table
    assert sum(row[2:3] == ["equal"] for row in rows) == 18, table  # every one-rank schedule
    assert [row[0] for row in rows if row[1] == "fused" and row[2:3] != ["equal"]] == [
        "sgd", "adam", "lamb"], table
