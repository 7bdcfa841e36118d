"""The FSM part of the GPU check (bench/gpu_check.py): every DFA sample run by the GPU
schemes (cpp_runtime/fsm/cuda/) on its sample input, against the CPU table driver's `auto`
on all the machine's cores over the same input. A row per sample and scheme: whether the
final state and counts equal the CPU's, the GB/s from device memory (the input already
there: the "on the device" phase) and from host memory (the copy in included), and the
ratio to the CPU. Medians of REPEAT runs in one process; the first run of each is a warm-up.

`fsm_rows(add, emulated)`: on a GPU (nvcc builds the driver) or, `emulated`, on the emulated
device with small inputs (a dry run: tests/e2e/test_gpu_check_script.py)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from parafuse.emitters.fsm.blob import machine_blob
from parafuse.emitters.fsm.cuda_driver import cuda_table_driver
from parafuse.emitters.fsm.project import table_driver
from parafuse.emitters.toolchain.nvidia import find_nvcc
from parafuse.fsm_compiler.analysis.project_analysis import untrained_analysis
from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import SourceFile

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
DFA_SAMPLES = ("div7", "csv", "clexer", "huffman", "weblog")
GPU_SCHEMES = ("enum", "spec", "auto")
REPEAT = 5
GPU_BYTES, EMULATED_BYTES = 256 << 20, 64 << 10

Add = Callable[..., None]  # gpu_check's Table.add(sample, schedule, result, note)


def sample_input(name: str, size: int) -> bytes:
    """The sample's generated input (samples/inputs.py), repeated up to `size` bytes."""
    sys.path.insert(0, str(SAMPLES))
    import inputs  # noqa: PLC0415

    piece = inputs.GENERATORS[name](min(size, 16 << 20))
    return (piece * (size // len(piece) + 1))[:size]


def driver_runs(command: list[str], timeout_s: float) -> list[dict]:
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr else "failed")
    return [json.loads(line) for line in done.stdout.splitlines()]


def _seconds(run: dict, phases: tuple[str, ...] | None = None) -> float:
    return sum(p["seconds"] for p in run["phases"] if phases is None or p["name"] in phases)


def _median(runs: list[dict], phases: tuple[str, ...] | None = None) -> float:
    return statistics.median(_seconds(run, phases) for run in runs[1:])  # the first warms up


def fsm_rows(add: Add, emulated: bool, timeout_s: float = 120.0,
             samples: tuple[str, ...] = DFA_SAMPLES) -> None:
    size = EMULATED_BYTES if emulated else GPU_BYTES
    try:
        gpu = cuda_table_driver(emulated, None if emulated else str(find_nvcc()))
        cpu = table_driver()
    except (OSError, subprocess.SubprocessError, RuntimeError) as error:
        add("fsm", "all", "build FAILED", str(error).splitlines()[-1])
        return
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as folder:
        for name in samples:
            path = SAMPLES / f"{name}.fsm"
            machine = compile_file(SourceFile(str(path), path.read_text("latin-1"))).machines[0]
            blob, data = Path(folder) / f"{name}.blob", Path(folder) / f"{name}.input"
            blob.write_bytes(machine_blob(machine, untrained_analysis(machine)))
            data.write_bytes(sample_input(name, size))
            try:
                cpu_runs = driver_runs([str(cpu), str(blob), str(data), "--profile",
                                  *[f"auto:{cores}:0"] * REPEAT], timeout_s)
            except (RuntimeError, subprocess.TimeoutExpired) as error:
                add(name, "cpu auto", "FAILED", str(error))
                continue
            cpu_gbps = size / _median(cpu_runs) / 1e9
            for scheme in GPU_SCHEMES:
                try:
                    runs = driver_runs([str(gpu), str(blob), str(data), "--profile",
                                  *[f"{scheme}:1:0"] * REPEAT], timeout_s)
                except (RuntimeError, subprocess.TimeoutExpired) as error:
                    add(name, f"gpu {scheme}", "FAILED", str(error))
                    continue
                same = all((r["final_state"], r["counts"]) ==
                           (cpu_runs[0]["final_state"], cpu_runs[0]["counts"]) for r in runs)
                device = size / _median(runs, ("on the device",)) / 1e9
                host = size / _median(runs) / 1e9
                ran = scheme if scheme != "auto" else f"auto:{runs[-1]['scheme']}"
                add(name, f"gpu {ran}", "ok" if same else "MISMATCH with CPU",
                    f"{device:.1f} GB/s device, {host:.1f} GB/s host; CPU auto on {cores} "
                    f"cores {cpu_gbps:.2f} GB/s; device {device / cpu_gbps:.1f}x CPU "
                    f"({size >> 10} KiB)")
