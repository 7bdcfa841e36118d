"""The token-set part of the GPU check (bench/gpu_check.py): every token-set sample
tokenized by the GPU's `spec` (cpp_runtime/fsm/cuda/token_run.cuh) on its sample input,
counts only, against the CPU runner's `auto` on all the machine's cores over the same
input. A row per sample: whether the counts per kind equal the CPU's, the GB/s from device
memory (the input already there) and from host memory (the copy in included), and the
ratio to the CPU. Medians of REPEAT runs in one process; the first GPU run warms up.

`token_rows(add, emulated)`: on a GPU (nvcc builds the driver) or, `emulated`, on the
emulated device with small inputs (a dry run: tests/e2e/test_gpu_check_script.py)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from parafuse.bench.fsm_gpu_check import REPEAT, SAMPLES, Add, driver_runs
from parafuse.emitters.fsm.cuda_driver import cuda_token_driver
from parafuse.emitters.fsm.token_blob import TokenHints, token_blob
from parafuse.emitters.fsm.token_project import cached_token_project
from parafuse.emitters.toolchain.nvidia import find_nvcc
from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import SourceFile

TOKEN_SAMPLES = ("json_tokens", "clexer_tokens", "log_tokens")
GPU_BYTES, EMULATED_BYTES = 128 << 20, 64 << 10


def token_input(name: str, size: int) -> bytes:
    """The sample's generated input (samples/tokens/token_inputs.py), repeated to `size`."""
    sys.path.insert(0, str(SAMPLES / "tokens"))
    import token_inputs  # noqa: PLC0415

    piece = token_inputs.GENERATORS[name](min(size, 16 << 20))
    return (piece * (size // len(piece) + 1))[:size]


def _cpu_auto(runner: Path, data: Path, timeout_s: float) -> dict:
    done = subprocess.run([str(runner), str(data), "--scheme", "auto", "--repeat", str(REPEAT),
                           "--json"], capture_output=True, text=True, timeout=timeout_s)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip() or "the CPU runner failed")
    return json.loads(done.stdout)


def _gpu_seconds(command: list[str], timeout_s: float) -> tuple[float, list[dict]]:
    [case] = driver_runs(command, timeout_s)
    runs = case["runs"]
    return statistics.median(run["seconds"] for run in runs[1:]), runs


def token_rows(add: Add, emulated: bool, timeout_s: float = 120.0,
               samples: tuple[str, ...] = TOKEN_SAMPLES) -> None:
    size = EMULATED_BYTES if emulated else GPU_BYTES
    try:
        gpu = cuda_token_driver(emulated, None if emulated else str(find_nvcc()))
    except (OSError, subprocess.SubprocessError, RuntimeError) as error:
        add("fsm tokens", "all", "build FAILED", str(error).splitlines()[-1])
        return
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as folder:
        for name in samples:
            path = SAMPLES / "tokens" / f"{name}.fsm"
            token_set = compile_file(SourceFile(str(path), path.read_text())).machines[0]
            blob, data = Path(folder) / f"{name}.blob", Path(folder) / f"{name}.input"
            blob.write_bytes(token_blob(token_set, TokenHints()))
            data.write_bytes(token_input(name, size))
            manifest = Path(folder) / f"{name}.manifest"
            manifest.write_text(f"{blob} {data}\n")
            try:
                runner = cached_token_project(token_set, str(path), TokenHints())
                cpu = _cpu_auto(runner / "build" / f"{name}_run", data, timeout_s)
            except (RuntimeError, OSError, subprocess.SubprocessError) as error:
                add(name, "cpu auto", "FAILED", str(error).splitlines()[-1])
                continue
            command = [str(gpu), str(manifest), "--counts-only", *["spec:1:0"] * REPEAT]
            try:
                host_s, runs = _gpu_seconds(command, timeout_s)
                device_s, device_runs = _gpu_seconds(command + ["--on-device"], timeout_s)
            except (RuntimeError, subprocess.TimeoutExpired) as error:
                add(name, "gpu spec", "FAILED", str(error))
                continue
            same = all(run["counted"] == list(cpu["counts"].values())
                       for run in runs + device_runs)
            device, host, cpu_gbps = size / device_s / 1e9, size / host_s / 1e9, cpu["gbps"]
            add(name, "gpu tokens spec", "ok" if same else "MISMATCH with CPU",
                f"{device:.1f} GB/s device, {host:.1f} GB/s host; CPU auto on {cores} cores "
                f"{cpu_gbps:.2f} GB/s; device {device / cpu_gbps:.1f}x CPU ({size >> 10} KiB)")
