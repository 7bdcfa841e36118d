"""The GPU benchmark of the CUDA backend, run by bench/gpu_check.py after its correctness
and bandwidth rows, side by side in one run on one GPU (R = 1):

- each fused optimizer step (samples/sgd.ccn, adam.ccn) against PyTorch's fused
  optimizer on the same GPU (the comparison with a device copy of the step's bytes is
  gpu_check's bandwidth row; PyTorch has no LAMB);
- the Megatron MLP block of samples/mlp.ccn (bf16) in every schedule, at each of the
  device's sizes, against PyTorch eager and torch.compile of the same block;
- a GEMM alone (the block's first: bf16 [B, D] x [D, F]) against torch.matmul;
- the transformer layer of samples/transformer.ccn (bf16, attention in one kernel) in every
  schedule against PyTorch eager and torch.compile of the same layer with
  scaled_dot_product_attention.

A time that implies more FLOP/s than the GPU's peak (PyTorch's 8192-cube bf16 product on
this GPU, 5% of slack) is a FAILED row, never a figure: a clock stopped early. PyTorch
runs in a subprocess (bench/torch_gpu_peers.py); where it or its CUDA device is missing,
its rows say so. On the emulated device (tests/e2e/test_gpu_check_script.py) the same
steps run at tiny sizes without peers."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from parafuse.ccn_compiler.frontend import check_source
from parafuse.emitters.toolchain.mpirun import LaunchTimeout, run_ranks
from parafuse.grammar.diagnostics import CompileError

HERE = Path(__file__).resolve().parent
PEAK_SLACK = 1.05
GEMM_SOURCE = """
program gemm(B, D, F) {
    input x: bf16[B, D] replicated
    input w: bf16[D, F] replicated
    h = matmul(x, w)
    output h
}
"""
AddRow = Callable[[str, str, str, str], None]  # (what, configuration, result, note)


def runner_ms(project: Path, program: str, schedule: str, sizes: dict[str, int],
              timeout_s: float) -> float:
    """The runner's median step time (it waits for the device before it stops a clock)."""
    args = ["--schedule", schedule, "--random", "--json", "--iters", "20", "--warmup", "3"]
    args += [a for name, value in sizes.items() for a in ("--size", f"{name}={value}")]
    done = run_ranks(project, program, 1, args, timeout_s=timeout_s)
    if done.returncode != 0:
        raise AssertionError(done.stderr.strip().splitlines()[-1:] or ["no output"])
    return json.loads(done.stdout.strip().splitlines()[-1])["median_ms"]


def torch_peers(*args: object, timeout_s: float = 300.0) -> dict[str, float] | str:
    """bench/torch_gpu_peers.py's configurations and times, or why there are none: this
    Python's PyTorch, else the machine's python3's."""
    reason = "no Python with PyTorch"
    for python in dict.fromkeys([sys.executable, shutil.which("python3")]):
        if not python:
            continue
        try:
            done = subprocess.run([python, str(HERE / "torch_gpu_peers.py"), *map(str, args)],
                                  capture_output=True, text=True, timeout=timeout_s)
        except subprocess.SubprocessError:
            reason = f"PyTorch peer past {timeout_s:g} s"
            continue
        try:
            result = json.loads(done.stdout.strip().splitlines()[-1])
        except (json.JSONDecodeError, IndexError):
            reason = f"PyTorch peer failed: {done.stderr.strip()[-60:]}"
            continue
        if "unavailable" not in result:
            return result
        reason = result["unavailable"]
    return reason


def judge_flops(flops: float, ms: float, peak_tflops: float | None) -> tuple[str, str]:
    """The row of a step of `flops` in `ms`: its TFLOP/s, or FAILED past the GPU's peak."""
    tflops = flops / (ms * 1e9)
    result = f"{ms:.3f} ms, {tflops:.0f} TFLOP/s"
    if peak_tflops and tflops > peak_tflops * PEAK_SLACK:
        return f"FAILED {tflops:.0f} TFLOP/s", f"past the peak {peak_tflops:.0f}: a clock " \
                                               "stopped early"
    return result, f"peak {peak_tflops:.0f}" if peak_tflops else ""


def _ours(add: AddRow, what: str, label: str, run: tuple, flops: float,
          peak: float | None) -> float | None:
    """Our row: `run` is runner_ms's arguments."""
    try:
        ms = runner_ms(*run)
    except (AssertionError, LaunchTimeout, CompileError) as error:
        add(what, label, "FAILED", str(error)[-70:])
        return None
    add(what, label, *judge_flops(flops, ms, peak))
    return ms


def _peers(add: AddRow, what: str, peers: dict[str, float] | str, flops: float,
           peak: float | None, ours: float | None) -> None:
    if isinstance(peers, str):
        add(what, "PyTorch", "no peer", peers)
        return
    for name, ms in peers.items():
        result, note = judge_flops(flops, ms, peak)
        if ours:
            note = f"parafuse's best is {ms / ours:.2f}x its speed" + (f"; {note}" if note else "")
        add(what, name, result, note)


def optimizer_peers(add: AddRow, sample: str, ours_ms: float | None, elements: int) -> None:
    """PyTorch's fused optimizer beside the fused step gpu_check timed."""
    peers = torch_peers("optimizer", sample, elements)
    if isinstance(peers, str):
        add(sample, "PyTorch", "no peer", peers)
        return
    for name, ms in peers.items():
        note = f"fused is {ms / ours_ms:.2f}x its speed" if ours_ms else ""
        add(sample, name, f"{ms:.3f} ms", note)


def mlp_and_gemm(add: AddRow, project: Path, build: Callable, sizes: list[tuple[int, int, int]],
                 with_peers: bool, timeout_s: float) -> None:
    """The MLP block in every schedule, then the GEMM alone, at each size."""
    module = check_source((HERE.parent / "samples" / "mlp.ccn").read_text(), "samples/mlp.ccn")
    gemm_module = check_source(GEMM_SOURCE, "gemm.ccn")
    try:
        gemm_project = build(gemm_module, "gemm", ["default"])
    except (CompileError, AssertionError, OSError, subprocess.SubprocessError) as error:
        gemm_project = None
        add("gemm", "all", "build FAILED", str(error)[-70:])
    found = torch_peers("peak") if with_peers else "emulated: no peers"
    peak = found["tflops"] if isinstance(found, dict) else None
    for b, d, f in sizes:
        shape = {"B": b, "D": d, "F": f}
        what = f"mlp {b}x{d}x{f}"
        best = None
        for schedule in module.schedule_names("mlp"):
            ms = _ours(add, what, schedule, (project, "mlp", schedule, shape, timeout_s),
                       4.0 * b * d * f, peak)
            best = ms if best is None or (ms and ms < best) else best
        _peers(add, what, torch_peers("mlp", b, d, f) if with_peers else found,
               4.0 * b * d * f, peak, best)
        if gemm_project is None:
            continue
        what = f"gemm {b}x{d}x{f}"
        ms = _ours(add, what, "cuBLASLt", (gemm_project, "gemm", "default", shape, timeout_s),
                   2.0 * b * d * f, peak)
        _peers(add, what, torch_peers("gemm", b, d, f) if with_peers else found,
               2.0 * b * d * f, peak, ms)


def layer_flops(t: int, d: int, h: int, e: int, f: int) -> float:
    """The transformer layer's multiply-adds, twice: q, k, v and output projections, scores
    and their product with v, the MLP's two GEMMs."""
    return 2.0 * (4 * t * d * h * e + 2 * t * t * h * e + 2 * t * d * f)


def transformer_layer(add: AddRow, project: Path, sizes: list[tuple[int, ...]],
                      with_peers: bool, timeout_s: float) -> None:
    """The layer in every schedule at each (T, D, H, E, F), then PyTorch's."""
    module = check_source((HERE.parent / "samples" / "transformer.ccn").read_text(),
                          "samples/transformer.ccn")
    found = torch_peers("peak") if with_peers else "emulated: no peers"
    peak = found["tflops"] if isinstance(found, dict) else None
    for t, d, h, e, f in sizes:
        shape = {"T": t, "D": d, "H": h, "E": e, "F": f}
        what, flops = f"layer T={t} D={d} H={h}", layer_flops(t, d, h, e, f)
        best = None
        for schedule in module.schedule_names("transformer"):
            ms = _ours(add, what, schedule, (project, "transformer", schedule, shape, timeout_s),
                       flops, peak)
            best = ms if best is None or (ms and ms < best) else best
        _peers(add, what, torch_peers("transformer", t, d, h, e, f) if with_peers else found,
               flops, peak, best)
