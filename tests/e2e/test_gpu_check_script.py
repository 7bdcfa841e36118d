"""bench/gpu_check.py, the script a session lent a GPU runs, as a dry run on the emulated
device: it builds, compares every sample and schedule with the reference at one rank,
times the fused optimizers and prints its table, so that the GPU's minutes go to the
GPU. The script imports nothing from tests: the emulated device is passed to it."""

from __future__ import annotations

import numpy as np
import pytest

from parafuse.bench import gpu_check
from parafuse.ccn_compiler.reference_runner import RunOptions, run_reference
from parafuse.ccn_compiler.tolerances import assert_same_outputs
from tests.backend_compare import sample_module
from tests.cuda_emulation.emulated_project import build_emulated
from tests.e2e.sample_cases import CASES

EMULATED = gpu_check.Device("emulated device, not a GPU", build_emulated, 1 << 12, False)


def _one_rank_schedules() -> int:
    """Schedules of the samples whose groups fit on one rank (those gpu_check runs)."""
    count = 0
    for sample in CASES:
        module = sample_module(sample)
        if not any(group.blocks > 1 for group in module.programs[sample].groups):
            count += len(module.schedule_names(sample))
    return count


def test_gpu_check_covers_every_sample_at_sizes_no_power_of_two() -> None:
    assert set(gpu_check.SIZES) == set(CASES)
    assert all(value & (value - 1) for sizes in gpu_check.SIZES.values()
               for value in sizes.values())


def test_gpu_check_runs_on_the_emulated_device(capsys: pytest.CaptureFixture[str]) -> None:
    rows = gpu_check.main(EMULATED)
    printed = capsys.readouterr().out
    table = printed[printed.index("CUDA backend GPU check on the emulated device"):]
    assert all(f"{sample:10} {schedule:12} {result:22} {note}".strip() in table
               for sample, schedule, result, note in rows), table
    assert "FAILED" not in table, table
    assert sum(row[2] == "equal to reference" for row in rows) == _one_rank_schedules(), table
    assert [row[0] for row in rows if row[1] == "fused" and row[2] != "equal to reference"] == [
        "sgd", "adam", "lamb"], table


def test_the_check_finds_an_output_file_that_disagrees(tmp_path) -> None:
    """The comparison gpu_check makes: the reference against itself, then one element of
    sgd's f32 weights moved by more than the tolerance of the bf16 gradient they depend on."""
    program = sample_module("sgd").scheduled_program("sgd", "fused")
    for folder in ("a", "b"):
        run_reference(program, "fused", RunOptions(1, ("N=1001",), seed=7,
                                                   outputs=str(tmp_path / folder), random=True))
    assert_same_outputs(program, tmp_path / "a", tmp_path / "b")
    weights = np.load(tmp_path / "a" / "w.rank0.npy")
    weights[500] += 0.5
    np.save(tmp_path / "a" / "w.rank0.npy", weights)
    with pytest.raises(AssertionError, match=r"w\.rank0\.npy: max\|a - b\| .*bf16.*\(500,\)"):
        assert_same_outputs(program, tmp_path / "a", tmp_path / "b")
