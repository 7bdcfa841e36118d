"""The GPU check of the CUDA backend (run by bench/gpu_check.sh on a machine with an
NVIDIA GPU, offline): every sample and schedule built for this GPU and run at one rank
on random inputs against the reference interpreter, then the fused optimizer steps'
achieved bandwidth against a device-to-device copy of the same bytes.

`main(device)` takes the device to check: `GPU` here; tests/e2e/test_gpu_check_script.py
passes the emulated device of tests/cuda_emulation/ (its project builder, small sizes, no
copy timing) in `make test`, a dry run of everything but the GPU."""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.frontend import CheckedModule, check_source
from parafuse.ccn_compiler.reference_runner import RunOptions, run_reference
from parafuse.ccn_compiler.tolerances import assert_same_outputs
from parafuse.ccn_compiler.types import ITEM_SIZE
from parafuse.emitters.ccn.cuda.project import build_cuda_project
from parafuse.emitters.toolchain.mpirun import run_ranks
from parafuse.emitters.toolchain.nvidia import find_nvcc

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
# Every sample at one rank, with sizes that are no power of two (nor divisible by 2, 3, 4).
SIZES: dict[str, dict[str, int]] = {
    "adam": {"N": 1001}, "lamb": {"N": 1001}, "sgd": {"N": 1001},
    "megatron": {"B": 3, "K": 5, "H": 7}, "pipeline": {"B": 3, "H": 5},
}
SEED, ITERS = 7, 3  # of the comparison with the reference
Builder = Callable[[CheckedModule, str, list[str]], Path]  # (module, program, schedules)


@dataclass(frozen=True)
class Device:
    """What the check runs on: the table names it `where`; `build` makes a sample's project
    with every schedule; the optimizer benchmarks take `elements` elements; `copy_peer`:
    time a device-to-device copy of the same bytes (needs nvcc and a GPU)."""

    where: str
    build: Builder
    elements: int
    copy_peer: bool


def build_for_gpu(module: CheckedModule, program: str, schedules: list[str]) -> Path:
    """The CUDA project for the GPU present (or PARAFUSE_CUDA_ARCH), cached by content."""
    project, built = build_cuda_project(module, program, schedules,
                                        f"coconetc build samples/{program}.ccn --backend cuda",
                                        cuda_arch=os.environ.get("PARAFUSE_CUDA_ARCH",
                                                                 "native"))
    assert built, "no nvcc"
    return project


GPU = Device("GPU", build_for_gpu, 1 << 25, True)

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


def _reason(error: AssertionError) -> str:
    """The line of a failure that says most: a failing call, else the first line."""
    lines = [line for line in str(error).splitlines() if line.strip()] or ["?"]
    return next((line for line in lines if "failed" in line or "error" in line), lines[0])[-70:]


def size_args(sizes: dict[str, int]) -> list[str]:
    return [a for name, value in sizes.items() for a in ("--size", f"{name}={value}")]


def check_against_reference(project: Path, scheduled: ir.Program, schedule: str,
                            sizes: dict[str, int], folder: Path) -> None:
    """Run one schedule on the device and with the reference interpreter, both at one rank
    on the same random inputs; raise AssertionError where an output file disagrees."""
    backend, reference = folder / "backend", folder / "reference"
    done = run_ranks(project, scheduled.name, 1,
                     ["--schedule", schedule, "--random", "--seed", str(SEED), "--iters",
                      str(ITERS), "--outputs", str(backend)] + size_args(sizes))
    if done.returncode != 0:
        raise AssertionError(done.stderr)
    run_reference(scheduled, schedule,
                  RunOptions(1, tuple(f"{n}={v}" for n, v in sizes.items()), seed=SEED,
                             outputs=str(reference), iters=ITERS, random=True))
    assert_same_outputs(scheduled, backend, reference, f"{schedule} R=1")


def correctness(projects: dict[str, Path], rows: list[list[str]]) -> None:
    for sample, sizes in SIZES.items():
        module = sample_module(sample)
        default = module.scheduled_program(sample, "default")
        if any(group.blocks > 1 for group in default.groups):
            rows.append([sample, "all", "skipped", "its groups need more ranks than one GPU "
                         "gives (NCCL refuses two ranks on one GPU)"])
            continue
        for schedule in module.schedule_names(sample):
            scheduled = module.scheduled_program(sample, schedule)
            with tempfile.TemporaryDirectory() as out:
                try:
                    check_against_reference(projects[sample], scheduled, schedule, sizes,
                                            Path(out))
                    rows.append([sample, schedule, "equal to reference", ""])
                except AssertionError as error:
                    rows.append([sample, schedule, "FAILED", _reason(error)])


def step_bytes(sample: str, elements: int) -> int:
    """Bytes a fused optimizer step must move: every input and state read, states written."""
    program = sample_module(sample).scheduled_program(sample, "fused")
    read = sum(ITEM_SIZE[t.type.dtype] * elements for t in program.tensors if t.type.shape)
    written = sum(ITEM_SIZE[program.tensor(s).type.dtype] * elements
                  for s, _ in program.state_updates)
    return read + written


def copy_ms(nbytes: int, folder: Path) -> float:
    source = folder / "copy.cu"
    source.write_text(COPY_SOURCE)
    subprocess.run([find_nvcc(), "-O2", "-o", str(folder / "copy"), str(source)], check=True)
    done = subprocess.run([str(folder / "copy"), str(nbytes)], capture_output=True, text=True,
                          check=True)
    return float(done.stdout)


def bandwidth(device: Device, projects: dict[str, Path], rows: list[list[str]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for sample in ("sgd", "adam", "lamb"):
            sizes = {name: device.elements for name in SIZES[sample]}
            done = run_ranks(projects[sample], sample, 1,
                             ["--schedule", "fused", "--random", "--json", "--iters", "20",
                              "--warmup", "3"] + size_args(sizes))
            if done.returncode != 0:
                rows.append([sample, "fused", "bandwidth FAILED",
                             _reason(AssertionError(done.stderr))])
                continue
            step_ms = json.loads(done.stdout.strip().splitlines()[-1])["median_ms"]
            nbytes = step_bytes(sample, device.elements)
            achieved = f"{nbytes / step_ms / 1e6:.0f} GB/s"
            if not device.copy_peer:
                rows.append([sample, "fused", achieved, "emulated: no copy to compare with"])
                continue
            try:
                copy = copy_ms(nbytes // 2, Path(tmp))  # a copy reads and writes nbytes/2 each
            except (subprocess.CalledProcessError, ValueError) as error:
                rows.append([sample, "fused", achieved, f"copy FAILED: {error}"[:70]])
                continue
            rows.append([sample, "fused", achieved,
                         f"copy {nbytes / copy / 1e6:.0f} GB/s, ratio {copy / step_ms:.2f}"])


def build_all(device: Device) -> dict[str, Path]:
    """Every sample's project at once (one nvcc per program: the machine has the cores)."""
    def build(sample: str) -> Path:
        module = sample_module(sample)
        return device.build(module, sample, module.schedule_names(sample))

    with ThreadPoolExecutor(max_workers=len(SIZES)) as pool:
        return dict(zip(SIZES, pool.map(build, SIZES)))


def main(device: Device = GPU) -> list[list[str]]:
    """Build, compare with the reference, time; print the table and return its rows
    (sample, schedule, result, note)."""
    start = time.time()
    rows: list[list[str]] = []
    projects = build_all(device)
    print(f"built every sample in {time.time() - start:.0f} s", flush=True)
    correctness(projects, rows)
    bandwidth(device, projects, rows)
    print(f"\nCUDA backend GPU check on the {device.where} ({time.time() - start:.0f} s)")
    print(f"{'sample':10} {'schedule':12} {'result':22} note")
    for sample, schedule, result, note in rows:
        print(f"{sample:10} {schedule:12} {result:22} {note}")
    return rows


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    main()
