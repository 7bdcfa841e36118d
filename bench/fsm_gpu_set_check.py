"""The pattern-set part of the GPU check (bench/gpu_check.py): real rule sets of several
engines run on the GPU (cpp_runtime/fsm/cuda/engine_set_run.cuh), against the CPU engine-set
driver's `auto` on all the machine's cores over the same input: Nosey Parker's first rules
over web-server logs (few matches) and rebar's regexes over sherlock.txt (many). A row per
set and GPU scheme: whether the counts and final states equal the CPU's, the GB/s from
device memory (the input already there) and from host memory (the copy in included), and
the ratio to the CPU. Medians of REPEAT runs in one process; the first run warms up.

`set_rows(add, emulated)`: on a GPU (nvcc builds the driver) or, `emulated`, on the emulated
device with small inputs (a dry run: tests/e2e/test_gpu_check_script.py)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from parafuse.bench.fsm_gpu_check import REPEAT, Add, driver_runs, sample_input
from parafuse.emitters.fsm.cuda_driver import cuda_engine_set_driver
from parafuse.emitters.fsm.engine_set_blob import engine_set_blob
from parafuse.emitters.fsm.project import engine_set_driver
from parafuse.emitters.toolchain.nvidia import find_nvcc
from parafuse.fsm_compiler.pipeline import analyse_for_project, compile_file
from parafuse.grammar.diagnostics import SourceFile

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
SETS = ("nosey", "rebar")
GPU_SCHEMES = ("spec", "auto")
GPU_BYTES, EMULATED_BYTES = 8 << 20, 32 << 10  # rebar over sherlock: 2 matches a byte


def rule_set(name: str, size: int) -> tuple[object, bytes]:
    """The set compiled, and its input of `size` bytes."""
    sys.path.insert(0, str(REPO / "bench"))
    import fsm_ruleset_sources as sources  # noqa: PLC0415

    if name == "nosey":
        entries = json.loads((DATA / "noseyparker" / "rules_head.json").read_text())
        rules = [sources.Rule(e["tag"], e["pattern"], "", (), ()) for e in entries]
        data = sample_input("weblog", size)
    else:
        rules = sources.parsable(sources.rebar_rules(DATA / "rebar"))
        text = (DATA / "rebar" / "sherlock_head.txt").read_bytes()
        data = (text * (size // len(text) + 1))[:size]
    source = sources.fsm_source(name, rules)
    return compile_file(SourceFile(f"{name}.fsm", source)).machines[0], data


def _median_seconds(runs: list[dict]) -> float:
    return statistics.median(run["seconds"] for run in runs[1:])  # the first warms up


def set_rows(add: Add, emulated: bool, timeout_s: float = 120.0,
             sets: tuple[str, ...] = SETS) -> None:
    size = EMULATED_BYTES if emulated else GPU_BYTES
    try:
        gpu = cuda_engine_set_driver(emulated, None if emulated else str(find_nvcc()))
        cpu = engine_set_driver()
    except (OSError, subprocess.SubprocessError, RuntimeError) as error:
        add("fsm sets", "all", "build FAILED", str(error).splitlines()[-1])
        return
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as folder:
        for name in sets:
            machine, data = rule_set(name, size)
            blob, path = Path(folder) / f"{name}.blob", Path(folder) / f"{name}.input"
            blob.write_bytes(engine_set_blob(machine, analyse_for_project(machine, None)))
            path.write_bytes(data)
            head = [str(blob), str(len(machine.tag_names)), str(path)]
            try:
                cpu_runs = driver_runs([str(cpu), *head, *[f"auto:{cores}:0"] * REPEAT], timeout_s)
            except (RuntimeError, subprocess.TimeoutExpired) as error:
                add(name, "cpu auto", "FAILED", str(error))
                continue
            cpu_gbps = size / _median_seconds(cpu_runs) / 1e9
            expected = cpu_runs[0]["final_state"], cpu_runs[0]["counts"]
            for scheme in GPU_SCHEMES:
                configs = [f"{scheme}:1:0"] * REPEAT
                try:
                    runs = driver_runs([str(gpu), *head, *configs], timeout_s)
                    device_runs = driver_runs([str(gpu), *head, "--on-device", *configs],
                                              timeout_s)
                except (RuntimeError, subprocess.TimeoutExpired) as error:
                    add(name, f"gpu {scheme}", "FAILED", str(error))
                    continue
                same = all((r["final_state"], r["counts"]) == expected
                           for r in runs + device_runs)
                device = size / _median_seconds(device_runs) / 1e9
                host = size / _median_seconds(runs) / 1e9
                add(name, f"gpu set {runs[-1]['scheme']}", "ok" if same else "MISMATCH with CPU",
                    f"{device:.2f} GB/s device, {host:.2f} GB/s host; CPU auto on {cores} "
                    f"cores {cpu_gbps:.2f} GB/s; device {device / cpu_gbps:.1f}x CPU "
                    f"({size >> 10} KiB, {sum(expected[1])} matches)")
