"""The GPU check of the CUDA backend (run by bench/gpu_check.sh on a machine with an
NVIDIA GPU, offline): every sample and schedule built for this GPU and run at one rank
on random inputs against the reference interpreter, then the fused optimizer steps'
achieved bandwidth against a device-to-device copy of the same bytes.

`--emulated` runs the same script on the emulated device of tests/cuda_emulation/ (no
GPU, small sizes, no copy timing): a dry run of everything but the GPU, which
tests/e2e/test_gpu_check_script.py does in `make test`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests" / "e2e")]  # for tests.*

from parafuse.ccn_compiler.types import ITEM_SIZE  # noqa: E402
from parafuse.emitters.ccn.cuda.project import build_cuda_project  # noqa: E402
from parafuse.emitters.toolchain.mpirun import run_ranks  # noqa: E402
from parafuse.emitters.toolchain.nvidia import find_nvcc  # noqa: E402
from tests.backend_compare import assert_backend_matches_reference, sample_module  # noqa: E402
from tests.e2e.sample_cases import CASES  # noqa: E402

EMULATED = "--emulated" in sys.argv[1:]
BIG_N = 1 << 12 if EMULATED else 1 << 25  # elements of the optimizer benchmarks
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


def build(sample: str) -> Path:
    module = sample_module(sample)
    if EMULATED:
        from tests.cuda_emulation.emulated_project import build_emulated
        return build_emulated(module, sample, module.schedule_names(sample))
    project, built = build_cuda_project(module, sample, module.schedule_names(sample),
                                        f"coconetc build samples/{sample}.ccn --backend cuda",
                                        cuda_arch=os.environ.get("PARAFUSE_CUDA_ARCH",
                                                                 "native"))
    assert built, "no nvcc"
    return project


def _reason(error: AssertionError) -> str:
    """The line of a failure that says most: a failing call, else the first line."""
    lines = [line for line in str(error).splitlines() if line.strip()] or ["?"]
    return next((line for line in lines if "failed" in line or "error" in line), lines[0])[-70:]


def correctness(rows: list[list[str]]) -> None:
    for sample, case in CASES.items():
        module = sample_module(sample)
        default = module.scheduled_program(sample, "default")
        if any(group.blocks > 1 for group in default.groups):
            rows.append([sample, "all", "skipped", "its groups need more ranks than one GPU "
                         "gives (NCCL refuses two ranks on one GPU)"])
            continue
        project = build(sample)
        for schedule in module.schedule_names(sample):
            scheduled = module.scheduled_program(sample, schedule)
            with tempfile.TemporaryDirectory() as out:
                try:
                    assert_backend_matches_reference(project, default, scheduled, schedule, 1,
                                                     case.sizes, Path(out))
                    rows.append([sample, schedule, "equal to reference", ""])
                except AssertionError as error:
                    rows.append([sample, schedule, "FAILED", _reason(error)])


def step_bytes(sample: str) -> int:
    """Bytes a fused optimizer step must move: every input and state read, states written."""
    program = sample_module(sample).scheduled_program(sample, "fused")
    read = sum(ITEM_SIZE[t.type.dtype] * BIG_N for t in program.tensors if t.type.shape)
    written = sum(ITEM_SIZE[program.tensor(s).type.dtype] * BIG_N
                  for s, _ in program.state_updates)
    return read + written


def copy_ms(nbytes: int, folder: Path) -> float:
    source = folder / "copy.cu"
    source.write_text(COPY_SOURCE)
    subprocess.run([find_nvcc(), "-O2", "-o", str(folder / "copy"), str(source)], check=True)
    done = subprocess.run([str(folder / "copy"), str(nbytes)], capture_output=True, text=True,
                          check=True)
    return float(done.stdout)


def bandwidth(rows: list[list[str]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for sample in ("sgd", "adam", "lamb"):
            project = build(sample)
            size_args = [a for name in CASES[sample].sizes for a in ("--size", f"{name}={BIG_N}")]
            done = run_ranks(project, sample, 1, ["--schedule", "fused", "--random", "--json",
                                                  "--iters", "20", "--warmup", "3"] + size_args)
            if done.returncode != 0:
                rows.append([sample, "fused", "bandwidth FAILED",
                             _reason(AssertionError(done.stderr))])
                continue
            step_ms = json.loads(done.stdout.strip().splitlines()[-1])["median_ms"]
            nbytes = step_bytes(sample)
            achieved = f"{nbytes / step_ms / 1e6:.0f} GB/s"
            if EMULATED:
                rows.append([sample, "fused", achieved, "emulated: no copy to compare with"])
                continue
            try:
                copy = copy_ms(nbytes // 2, Path(tmp))  # a copy reads and writes nbytes/2 each
            except (subprocess.CalledProcessError, ValueError) as error:
                rows.append([sample, "fused", achieved, f"copy FAILED: {error}"[:70]])
                continue
            rows.append([sample, "fused", achieved,
                         f"copy {nbytes / copy / 1e6:.0f} GB/s, ratio {copy / step_ms:.2f}"])


def build_all() -> None:
    """Every sample's project at once (one nvcc per program: the machine has the cores)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=len(CASES)) as pool:
        list(pool.map(build, CASES))


def main() -> None:
    start = time.time()
    rows: list[list[str]] = []
    build_all()
    print(f"built every sample in {time.time() - start:.0f} s", flush=True)
    correctness(rows)
    bandwidth(rows)
    where = "emulated device, not a GPU" if EMULATED else "GPU"
    print(f"\nCUDA backend GPU check on the {where} ({time.time() - start:.0f} s)")
    print(f"{'sample':10} {'schedule':12} {'result':22} note")
    for sample, schedule, result, note in rows:
        print(f"{sample:10} {schedule:12} {result:22} {note}")


if __name__ == "__main__":
    main()
