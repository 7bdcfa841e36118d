"""bench/gpu_check.py, the script a session lent a GPU runs, as a dry run on the emulated
device (`bench/gpu_check.sh --emulated`, here on the samples of DRY_RUN): it builds,
compares every sample and schedule with the reference at the fewest ranks each allows (up
to 3), times the fused optimizers, and
prints each row as it completes, so that the GPU's minutes go to the GPU. A build that
fails and a run past its time limit are rows, and the check goes on."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import time

import numpy as np
import pytest

from parafuse.bench import (
    fsm_gpu_check,
    fsm_gpu_set_check,
    fsm_gpu_token_check,
    gpu_bench,
    gpu_check,
)
from parafuse.ccn_compiler.reference.runner import RunOptions, run_reference
from parafuse.ccn_compiler.reference.tolerances import assert_same_outputs
from parafuse.emitters.toolchain.cmake import BuildError
from tests.backend_compare import sample_module
from tests.conftest import SAMPLES

# The samples of the dry run: the optimizers (the bandwidth rows) and the MLP block (the
# GEMM rows). Every sample and schedule runs on the emulated device in test_cuda_emulated.py;
# what this test adds is the script around the runs.
DRY_RUN = ["sgd", "adam", "lamb", "mlp"]


def _schedules_that_fit(ranks: int) -> int:
    count = 0
    for sample in DRY_RUN:
        module = sample_module(sample)
        count += sum(gpu_check.ranks_needed(module.scheduled_program(sample, s)) <= ranks
                     for s in module.schedule_names(sample))
    return count


def test_gpu_check_covers_every_sample_at_sizes_no_power_of_two() -> None:
    assert set(gpu_check.SIZES) == {p.stem for p in SAMPLES.glob("*.ccn")}
    assert all(value & (value - 1) for sizes in gpu_check.SIZES.values()
               for value in sizes.values())


@pytest.mark.slow
def test_gpu_check_runs_on_the_emulated_device_row_by_row() -> None:
    printed: list[tuple[float, str]] = []
    rows = gpu_check.main(gpu_check.EMULATED, DRY_RUN,
                          emit=lambda line: printed.append((time.monotonic(), line)), fsm=False)
    lines = [line for _, line in printed]
    assert lines[0] == "CUDA backend GPU check on the emulated device, not a GPU"
    for sample, schedule, result, note in rows:
        assert f"{sample:10} {schedule:12} {result:22} {note}".rstrip() in lines
    assert not [row for row in rows if "FAILED" in row[2] or "TIMED" in row[2]], lines
    every = _schedules_that_fit(gpu_check.EMULATED.ranks)
    assert sum(row[2] == "equal to reference" for row in rows) == every, lines
    assert {row[0] for row in rows if row[2] == "skipped"} <= set(DRY_RUN), lines
    assert [row[0] for row in rows if row[1] == "fused" and row[2].endswith("GB/s")] == [
        "sgd", "adam", "lamb"], lines
    mlp = [row for row in rows if row[0] == "mlp 5x6x7"]  # gpu_bench's rows
    assert [row[1] for row in mlp] == [*sample_module("mlp").schedule_names("mlp"),
                                       "PyTorch"], lines
    assert all(row[2].endswith("TFLOP/s") for row in mlp[:-1]), lines
    assert mlp[-1][2:] == ["no peer", "emulated: no peers"], lines
    assert [row[1] for row in rows if row[0] == "gemm 5x6x7"] == ["cuBLASLt", "PyTorch"], lines
    # the first row was printed long before the last, not all at the end
    first, last = printed[2][0], printed[-2][0]
    assert last - first > 1.0, lines


def test_a_step_faster_than_a_copy_of_its_bytes_fails() -> None:
    """An AdamW step over 2^25 elements (26 B each) in 0.019 ms would be 45.9 TB/s: a clock
    stopped when the step was queued, not a figure."""
    nbytes = 26 << 25
    result, note = gpu_check.judge_bandwidth(nbytes, 0.019, 0.231)
    assert result == "FAILED 45917 GB/s" and "clock stopped early" in note, (result, note)
    assert gpu_check.judge_bandwidth(nbytes, 0.25, 0.231) == (
        "3490 GB/s", "copy 3777 GB/s, ratio 0.92")


def test_a_time_past_the_gpus_peak_fails() -> None:
    """The MLP block of B = D = 4096, F = 16384 (1.1 PFLOP a step) in 0.064 ms would be 17
    PFLOP/s: a clock stopped when the step was queued."""
    flops = 4.0 * 4096 * 4096 * 16384
    result, note = gpu_bench.judge_flops(flops, 0.064, 790.0)
    assert result == "FAILED 17180 TFLOP/s" and "clock stopped early" in note, (result, note)
    assert gpu_bench.judge_flops(flops, 1.95, 790.0) == ("1.950 ms, 564 TFLOP/s", "peak 790")


def test_the_pytorch_peers_say_why_they_are_missing() -> None:
    """Without PyTorch's CUDA device (this machine) the peers are a reason, not a time."""
    found = gpu_bench.torch_peers("gemm", 8, 8, 8)
    assert isinstance(found, str) and ("PyTorch" in found or "Python" in found), found


def test_a_failed_build_and_a_run_past_its_limit_are_rows(monkeypatch) -> None:
    def broken(module, program, schedules):
        if program == "send_ring":
            raise BuildError("build failed: cmake --build ...\nsrc/send_ring.cu:1: error: x")
        return gpu_check.EMULATED.build(module, program, schedules)

    device = dataclasses.replace(gpu_check.EMULATED, build=broken, run_timeout_s=0.01)
    rows = gpu_check.main(device, ["send_ring", "sgd"], emit=lambda line: None, fsm=False)
    assert rows[0][:3] == ["send_ring", "all", "build FAILED"] and "error" in rows[0][3], rows
    sgd = sample_module("sgd").schedule_names("sgd")
    assert [row[1] for row in rows if row[2] == "TIMED OUT"] == sgd, rows
    assert rows[-1][:3] == ["sgd", "fused", "bandwidth TIMED OUT"], rows


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


def test_the_script_takes_emulated_and_only() -> None:
    done = subprocess.run([sys.executable, "-m", "parafuse.bench.gpu_check", "--help"],
                          capture_output=True, text=True)
    assert done.returncode == 0 and "--emulated" in done.stdout, done.stdout + done.stderr
    assert "--only {ccn,fsm}" in done.stdout, done.stdout


def test_the_fsm_rows_compare_with_the_cpu_and_give_both_rates() -> None:
    """bench/fsm_gpu_check.py on the emulated device: a row per sample and GPU scheme, each
    equal to the CPU's result, with GB/s from device and from host memory."""
    rows: list[list[str]] = []
    fsm_gpu_check.fsm_rows(lambda *row: rows.append(list(row)), emulated=True,
                           samples=("div7", "clexer"))
    assert [row[:2] for row in rows] == [  # auto: div7's fused DFA is complete, clexer's not
        [name, scheme] for name, auto in (("div7", "enum"), ("clexer", "spec"))
        for scheme in ("gpu enum", "gpu spec", f"gpu auto:{auto}")], rows
    assert all(row[2] == "ok" and " GB/s device, " in row[3] and " GB/s host; " in row[3]
               for row in rows), rows


def test_an_fsm_row_that_differs_from_the_cpu_says_so(monkeypatch) -> None:
    """The GPU's counts one off in one tag: every GPU row is a mismatch."""
    runs = fsm_gpu_check.driver_runs

    def one_off(command: list[str], timeout_s: float) -> list[dict]:
        found = runs(command, timeout_s)
        if "cuda" in command[0]:
            for run in found:
                run["counts"][0] += 1
        return found

    monkeypatch.setattr(fsm_gpu_check, "driver_runs", one_off)
    rows: list[list[str]] = []
    fsm_gpu_check.fsm_rows(lambda *row: rows.append(list(row)), emulated=True, samples=("div7",))
    assert [row[2] for row in rows] == ["MISMATCH with CPU"] * 3, rows


def test_the_token_rows_compare_with_the_cpu_and_give_both_rates() -> None:
    rows: list[list[str]] = []
    fsm_gpu_token_check.token_rows(lambda *row: rows.append(list(row)), emulated=True,
                                   samples=("json_tokens",))
    assert [row[:3] for row in rows] == [["json_tokens", "gpu tokens spec", "ok"]], rows
    assert " GB/s device, " in rows[0][3] and " GB/s host; " in rows[0][3], rows


def test_a_token_row_that_differs_from_the_cpu_says_so(monkeypatch) -> None:
    """The GPU's count of one kind one off, in its device-memory runs only: a mismatch."""
    runs = fsm_gpu_token_check.driver_runs

    def one_off(command: list[str], timeout_s: float) -> list[dict]:
        found = runs(command, timeout_s)
        if "--on-device" in command:
            found[0]["runs"][-1]["counted"][0] += 1
        return found

    monkeypatch.setattr(fsm_gpu_token_check, "driver_runs", one_off)
    rows: list[list[str]] = []
    fsm_gpu_token_check.token_rows(lambda *row: rows.append(list(row)), emulated=True,
                                   samples=("json_tokens",))
    assert [row[2] for row in rows] == ["MISMATCH with CPU"], rows


def test_the_set_rows_compare_with_the_cpu_and_give_both_rates() -> None:
    rows: list[list[str]] = []
    fsm_gpu_set_check.set_rows(lambda *row: rows.append(list(row)), emulated=True)
    assert [row[:3] for row in rows] == [  # auto: enum for every DFA
        ["nosey", "gpu set spec", "ok"], ["nosey", "gpu set enum", "ok"],
        ["rebar", "gpu set spec+nfa", "ok"], ["rebar", "gpu set enum+nfa", "ok"]], rows
    assert all(" GB/s device, " in row[3] and " GB/s host; " in row[3] for row in rows), rows


def test_the_layer_rows_time_every_schedule_and_say_when_there_is_no_peer() -> None:
    """gpu_bench's transformer layer on the emulated device: a row per schedule with its
    TFLOP/s, then PyTorch's (none here)."""
    module = sample_module("transformer")
    project = gpu_check.EMULATED.build(module, "transformer", module.schedule_names("transformer"))
    rows: list[list[str]] = []
    gpu_bench.transformer_layer(lambda *row: rows.append(list(row)), project, [(9, 6, 2, 3, 5)],
                                False, 120.0)
    assert [row[:2] for row in rows] == [
        ["layer T=9 D=6 H=2", schedule] for schedule in module.schedule_names("transformer")
    ] + [["layer T=9 D=6 H=2", "PyTorch"]], rows
    assert all(row[2].endswith("TFLOP/s") for row in rows[:-1]), rows
    assert rows[-1][2:] == ["no peer", "emulated: no peers"], rows
