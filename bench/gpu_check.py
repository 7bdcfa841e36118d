"""The GPU check of the CUDA backend (run by bench/gpu_check.sh on a machine with NVIDIA
GPUs, offline): every sample and schedule built for these GPUs and run on random inputs
against the reference interpreter, at the fewest ranks its groups allow (NCCL wants one GPU
per rank: a schedule that needs more ranks than there are GPUs is a row saying so), then the
fused optimizer steps' achieved bandwidth against a device-to-device copy of the same bytes
(a step faster than the copy is a FAILED row: a clock stopped early), then the benchmark of
bench/gpu_bench.py (PyTorch's fused optimizers, the MLP block and a GEMM alone, side by side),
then boostfsm's DFA and token-set samples and two real rule sets on the GPU against the
CPU on all cores (bench/fsm_gpu_check.py, fsm_gpu_token_check.py, fsm_gpu_set_check.py).
Each row is printed as it completes; each run has its own time limit (a run past it is a
TIMED OUT row, and the check goes on), and a build that fails is a row too.

`main(device)` takes the device to check: `GPU` here, or with --emulated the emulated
device (cpp_runtime/ccn/cuda_emulated/: small sizes, up to 3 ranks, no copy timing), a dry
run of everything but the GPU (tests/e2e/test_gpu_check_script.py, in `make test`)."""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from parafuse.bench import gpu_bench
from parafuse.bench.fsm_gpu_check import fsm_rows
from parafuse.bench.fsm_gpu_set_check import set_rows
from parafuse.bench.fsm_gpu_token_check import token_rows
from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.frontend import CheckedModule, check_source
from parafuse.ccn_compiler.reference.runner import RunOptions, run_reference
from parafuse.ccn_compiler.reference.tolerances import assert_same_outputs
from parafuse.ccn_compiler.types import ITEM_SIZE
from parafuse.emitters.ccn.cuda import emulated
from parafuse.emitters.ccn.cuda.project import build_cuda_project
from parafuse.emitters.toolchain.mpirun import LaunchTimeout, run_ranks
from parafuse.emitters.toolchain.nvidia import find_nvcc
from parafuse.grammar.diagnostics import CompileError

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
# Every sample, with sizes that are no power of two (nor divisible by 2, 3, 4).
SIZES: dict[str, dict[str, int]] = {
    "adam": {"N": 1001}, "lamb": {"N": 1001}, "sgd": {"N": 1001},
    "megatron": {"B": 3, "K": 5, "H": 7}, "send_ring": {"B": 3, "H": 5},
    "pipeline": {"B": 7, "D": 13, "F": 11, "G": 9},
    "mlp": {"B": 7, "D": 13, "F": 11}, "mlp_sp": {"B": 7, "D": 13, "F": 11},
    "transformer": {"T": 7, "D": 13, "H": 5, "E": 3, "F": 11},
    "transformer_sp": {"T": 7, "D": 13, "H": 5, "E": 3, "F": 11},
}
# A step faster than a device copy of the bytes it must move is a clock stopped early.
COPY_MARGIN = 1.05
SEED, ITERS = 7, 3  # of the comparison with the reference
Builder = Callable[[CheckedModule, str, list[str]], Path]  # (module, program, schedules)


@dataclass(frozen=True)
class Device:
    """What the check runs on: the table names it `where`; `build` makes a sample's project
    with every schedule; the optimizer benchmarks take `elements` elements; `copy_peer`:
    time a device-to-device copy of the same bytes (needs nvcc and a GPU); `ranks`: the most
    ranks a run may have (one per GPU); `run_timeout_s`: the limit of each run; `mlp_sizes`,
    `layer_sizes` and `peers`: what bench/gpu_bench.py measures."""

    where: str
    build: Builder
    elements: int
    copy_peer: bool
    ranks: int = 1
    run_timeout_s: float = 120.0
    mlp_sizes: tuple[tuple[int, int, int], ...] = ()  # (B, D, F) of gpu_bench's MLP block
    layer_sizes: tuple[tuple[int, ...], ...] = ()  # (T, D, H, E, F) of its transformer layer
    peers: bool = False  # PyTorch on the same device (gpu_bench)


def build_for_gpu(module: CheckedModule, program: str, schedules: list[str]) -> Path:
    """The CUDA project for the GPU present (or PARAFUSE_CUDA_ARCH), cached by content."""
    project, built = build_cuda_project(module, program, schedules,
                                        f"coconetc build samples/{program}.ccn --backend cuda",
                                        cuda_arch=os.environ.get("PARAFUSE_CUDA_ARCH",
                                                                 "native"))
    assert built, "no nvcc"
    return project


def gpu_count() -> int:
    """The GPUs `nvidia-smi -L` lists (0 without it)."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return 0
    done = subprocess.run([smi, "-L"], capture_output=True, text=True)
    return sum(line.startswith("GPU ") for line in done.stdout.splitlines())


def gpu_device() -> Device:
    return Device("GPU", build_for_gpu, 1 << 25, True, max(1, gpu_count()),
                  mlp_sizes=((4096, 4096, 16384), (1024, 1024, 4096)),
                  layer_sizes=((2048, 2048, 16, 128, 8192),), peers=True)


def build_emulated(module: CheckedModule, program: str, schedules: list[str]) -> Path:
    """The project `coconetc run --backend cuda-emulated` builds (and the tests: one cache)."""
    command = f"coconetc build {module.filename} --backend {emulated.BACKEND}"
    return emulated.build_emulated_project(module, program, schedules, command)


EMULATED = Device("emulated device, not a GPU", build_emulated, 1 << 12, False, 3, 120.0,
                  mlp_sizes=((5, 6, 7),), layer_sizes=((9, 6, 2, 3, 5),))

COPY_SOURCE = r"""
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
int main(int argc, char** argv) {
  size_t bytes = std::strtoull(argv[1], nullptr, 10);
  void *a, *b; cudaMalloc(&a, bytes); cudaMalloc(&b, bytes);
  cudaEvent_t s, e; cudaEventCreate(&s); cudaEventCreate(&e);
  for (int i = 0; i < 3; ++i) cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
  cudaEventRecord(s);
  for (int i = 0; i < 20; ++i) cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice);
  cudaEventRecord(e); cudaEventSynchronize(e);
  float ms = 0; cudaEventElapsedTime(&ms, s, e);
  std::printf("%f\n", ms / 20);
  return cudaGetLastError() != cudaSuccess;
}
"""


@functools.cache
def sample_module(sample: str) -> CheckedModule:
    return check_source((SAMPLES / f"{sample}.ccn").read_text(), f"samples/{sample}.ccn")


def _reason(error: Exception) -> str:
    """The line of a failure that says most: a failing call, else the first line."""
    lines = [line for line in str(error).splitlines() if line.strip()] or ["?"]
    return next((line for line in lines if "failed" in line or "error" in line), lines[0])[-70:]


def size_args(sizes: dict[str, int]) -> list[str]:
    return [a for name, value in sizes.items() for a in ("--size", f"{name}={value}")]


class Table:
    """The check's rows (sample, schedule, result, note), each printed when it is added."""

    def __init__(self, where: str, emit: Callable[[str], None]) -> None:
        self.rows: list[list[str]] = []
        self.emit = emit
        emit(f"CUDA backend GPU check on the {where}")
        emit(f"{'sample':10} {'schedule':12} {'result':22} note")

    def add(self, sample: str, schedule: str, result: str, note: str = "") -> None:
        self.rows.append([sample, schedule, result, note])
        self.emit(f"{sample:10} {schedule:12} {result:22} {note}".rstrip())


def ranks_needed(program: ir.Program) -> int:
    """The fewest ranks a run of `program` may have: every group's blocks divide it."""
    return math.lcm(1, *(group.blocks for group in program.groups))


def check_against_reference(project: Path, scheduled: ir.Program, schedule: str,
                            sizes: dict[str, int], ranks: int, folder: Path,
                            timeout_s: float) -> None:
    """Run one schedule on the device and with the reference interpreter on the same random
    inputs; raise AssertionError where an output file disagrees, LaunchTimeout past the
    limit."""
    backend, reference = folder / "backend", folder / "reference"
    done = run_ranks(project, scheduled.name, ranks,
                     ["--schedule", schedule, "--random", "--seed", str(SEED), "--iters",
                      str(ITERS), "--outputs", str(backend)] + size_args(sizes),
                     timeout_s=timeout_s)
    if done.returncode != 0:
        raise AssertionError(done.stderr)
    run_reference(scheduled, schedule,
                  RunOptions(ranks, tuple(f"{n}={v}" for n, v in sizes.items()), seed=SEED,
                             outputs=str(reference), iters=ITERS, random=True))
    assert_same_outputs(scheduled, backend, reference, f"{schedule} R={ranks}")


def correctness(device: Device, sample: str, project: Path, table: Table) -> None:
    module = sample_module(sample)
    for schedule in module.schedule_names(sample):
        scheduled = module.scheduled_program(sample, schedule)
        ranks = ranks_needed(scheduled)
        if ranks > device.ranks:
            table.add(sample, schedule, "skipped", f"needs {ranks} ranks, one GPU each "
                      f"(NCCL refuses two ranks on one GPU); {device.ranks} here")
            continue
        with tempfile.TemporaryDirectory() as out:
            try:
                check_against_reference(project, scheduled, schedule, SIZES[sample], ranks,
                                        Path(out), device.run_timeout_s)
                table.add(sample, schedule, "equal to reference", f"R={ranks}")
            except LaunchTimeout:
                table.add(sample, schedule, "TIMED OUT", f"R={ranks}: past "
                          f"{device.run_timeout_s:g} s, killed")
            except (AssertionError, CompileError) as error:
                table.add(sample, schedule, "FAILED", f"R={ranks}: {_reason(error)}")


def step_bytes(sample: str, elements: int) -> int:
    """Bytes a fused optimizer step must move: every input and state read, states written."""
    program = sample_module(sample).scheduled_program(sample, "fused")
    read = sum(ITEM_SIZE[t.type.dtype] * elements for t in program.tensors if t.type.shape)
    written = sum(ITEM_SIZE[program.tensor(s).type.dtype] * elements
                  for s, _ in program.state_updates)
    return read + written


def copy_ms(nbytes: int, folder: Path, timeout_s: float) -> float:
    source = folder / "copy.cu"
    source.write_text(COPY_SOURCE)
    subprocess.run([find_nvcc(), "-O2", "-o", str(folder / "copy"), str(source)], check=True,
                   timeout=timeout_s)
    done = subprocess.run([str(folder / "copy"), str(nbytes)], capture_output=True, text=True,
                          check=True, timeout=timeout_s)
    return float(done.stdout)


def bandwidth(device: Device, sample: str, project: Path, table: Table) -> float | None:
    """The fused step's bandwidth row; its median step time (None where it did not run)."""
    sizes = {name: device.elements for name in SIZES[sample]}
    try:
        done = run_ranks(project, sample, 1,
                         ["--schedule", "fused", "--random", "--json", "--iters", "20",
                          "--warmup", "3"] + size_args(sizes), timeout_s=device.run_timeout_s)
    except LaunchTimeout:
        table.add(sample, "fused", "bandwidth TIMED OUT", f"past {device.run_timeout_s:g} s")
        return None
    if done.returncode != 0:
        table.add(sample, "fused", "bandwidth FAILED", _reason(AssertionError(done.stderr)))
        return None
    step_ms = json.loads(done.stdout.strip().splitlines()[-1])["median_ms"]
    nbytes = step_bytes(sample, device.elements)
    achieved = f"{nbytes / step_ms / 1e6:.0f} GB/s"
    if not device.copy_peer:
        table.add(sample, "fused", achieved, "emulated: no copy to compare with")
        return step_ms
    try:
        with tempfile.TemporaryDirectory() as tmp:
            # a copy reads and writes nbytes / 2 each
            copy = copy_ms(nbytes // 2, Path(tmp), device.run_timeout_s)
    except (subprocess.SubprocessError, ValueError) as error:
        table.add(sample, "fused", achieved, f"copy FAILED: {error}"[:70])
        return step_ms
    table.add(sample, "fused", *judge_bandwidth(nbytes, step_ms, copy))
    return step_ms


def judge_bandwidth(nbytes: int, step_ms: float, copy_ms: float) -> tuple[str, str]:
    """The row of a fused step that moves `nbytes` in `step_ms`, beside a device copy of the
    same bytes in `copy_ms`: its GB/s and the ratio to the copy, or a failure where the step
    beat the copy (no kernel moves bytes faster than a copy: its clock stopped early)."""
    achieved = f"{nbytes / step_ms / 1e6:.0f} GB/s"
    note = f"copy {nbytes / copy_ms / 1e6:.0f} GB/s, ratio {copy_ms / step_ms:.2f}"
    if copy_ms / step_ms > COPY_MARGIN:
        return f"FAILED {achieved}", f"{note}: faster than a copy, a clock stopped early"
    return achieved, note


def build_all(device: Device, samples: list[str], table: Table) -> dict[str, Path]:
    """Every sample's project at once (one nvcc per program: the machine has the cores); a
    build that fails is a row, and its sample's runs are left out."""
    def build(sample: str) -> Path:
        module = sample_module(sample)
        return device.build(module, sample, module.schedule_names(sample))

    projects: dict[str, Path] = {}
    with ThreadPoolExecutor(max_workers=max(1, len(samples))) as pool:
        futures = {pool.submit(build, sample): sample for sample in samples}
        for future in as_completed(futures):
            sample = futures[future]
            try:
                projects[sample] = future.result()
            except (CompileError, AssertionError, OSError, subprocess.SubprocessError) as error:
                table.add(sample, "all", "build FAILED", _reason(error))
    return projects


def main(device: Device | None = None, samples: list[str] | None = None,
         emit: Callable[[str], None] = lambda line: print(line, flush=True),
         fsm: bool = True) -> list[list[str]]:
    """Build, compare with the reference, time; print each row of the table as it is done
    and return the rows (sample, schedule, result, note). `samples=[]` and `fsm`: the FSM
    rows alone (bench/fsm_gpu_check.py)."""
    device = device or gpu_device()
    samples = list(SIZES) if samples is None else samples
    start = time.time()
    table = Table(device.where, emit)
    projects = build_all(device, samples, table)
    emit(f"(built in {time.time() - start:.0f} s)")
    for sample in (s for s in samples if s in projects):
        correctness(device, sample, projects[sample], table)
    for sample in (s for s in ("sgd", "adam", "lamb") if s in projects):
        step_ms = bandwidth(device, sample, projects[sample], table)
        if device.peers and sample != "lamb":  # PyTorch has no LAMB
            gpu_bench.optimizer_peers(table.add, sample, step_ms, device.elements)
    if "mlp" in projects:
        gpu_bench.mlp_and_gemm(table.add, projects["mlp"], device.build, list(device.mlp_sizes),
                               device.peers, device.run_timeout_s)
    if "transformer" in projects:
        gpu_bench.transformer_layer(table.add, projects["transformer"], list(device.layer_sizes),
                                    device.peers, device.run_timeout_s)
    if fsm:
        fsm_rows(table.add, emulated=not device.copy_peer, timeout_s=device.run_timeout_s)
        token_rows(table.add, emulated=not device.copy_peer, timeout_s=device.run_timeout_s)
        set_rows(table.add, emulated=not device.copy_peer, timeout_s=device.run_timeout_s)
    emit(f"(done in {time.time() - start:.0f} s)")
    return table.rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--emulated", action="store_true",
                        help="check on the emulated device (no GPU, no CUDA toolkit)")
    parser.add_argument("--only", choices=["ccn", "fsm"],
                        help="the coconetc rows or the boostfsm rows alone")
    args = parser.parse_args()
    main(EMULATED if args.emulated else None, [] if args.only == "fsm" else None,
         fsm=args.only != "ccn")
