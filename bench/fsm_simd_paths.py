"""boostfsm `enum` at one thread under each SIMD path side by side, for machines of up to 16
states (where several paths run the same plan) and perm40 (unchanged, a check): fresh
runner processes alternating between the paths round after round, so that every path
meets the same load, each process `--repeat K` runs.

    .venv/bin/python bench/fsm_simd_paths.py [--rounds N] [--repeat K] [--size BYTES]

(also run by `make bench-fsm`)

Per path: the median over the rounds of the runner's own median GB/s (wall clock, the
whole `enum` run: plan, chunks, compose, counts) and of the CPU-time rate of the whole
process (repeat x input bytes / its user + system seconds: includes starting and mapping
the input, so slightly under the run's own). The shared machine's load moves single runs
by up to 2x: compare the paths' ratios within one table. Writes
bench/results/fsm_simd_paths.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "bench"), str(REPO / "samples")]

from fsm_schemes import machine_description  # noqa: E402
from fsm_simd import PATH_MOST_STATES, PATHS, cases  # noqa: E402

from parafuse.emitters.fsm.project import ProjectRequest, cached_project  # noqa: E402
from parafuse.fsm_compiler.pipeline import analyse_for_project  # noqa: E402

RESULTS = REPO / "bench" / "results"
LABELS = ("perm12", "perm12_3groups", "random10", "csv", "clexer_headers", "perm40")
VECTOR_PATHS = [path for path in PATHS if path not in ("scalar", "none")]


# The words of each path in the JSON reason (cpp_runtime/fsm/simd_enum.hpp).
PATH_WORDS = {"ssse3": "SSSE3", "avx2": "AVX2", "avx512vl": "AVX-512VL",
              "avx512vbmi": "AVX-512 VBMI"}


def timed_run(runner: Path, data: Path, path: str, repeat: int) -> tuple[float, float]:
    """(the runner's median GB/s, the process's CPU-time GB/s) of `enum` forced to `path`."""
    command = [str(runner), str(data), "--json", "--scheme", "enum", "--threads", "1",
               "--repeat", str(repeat)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, PARAFUSE_FSM_SIMD=path))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{path}: {done.stderr.strip()}")
    result = json.loads(done.stdout)
    assert PATH_WORDS[path] in result["reason"], result["reason"]
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return result["gbps"], repeat * data.stat().st_size / cpu / 1e9


def bench_case(label: str, machine, data: Path, args) -> dict:
    analysis = analyse_for_project(machine, data.read_bytes()[:1 << 20])
    folder = cached_project(ProjectRequest(machine, f"{label}.fsm", analysis))
    runner = folder / "build" / f"{machine.name}_run"
    paths = [p for p in VECTOR_PATHS if machine.state_count <= PATH_MOST_STATES[p]]
    wall: dict[str, list[float]] = {p: [] for p in paths}
    cpu: dict[str, list[float]] = {p: [] for p in paths}
    for _ in range(args.rounds):
        for path in paths:
            rate, cpu_rate = timed_run(runner, data, path, args.repeat)
            wall[path].append(rate)
            cpu[path].append(cpu_rate)
    row = {"label": label, "states": machine.state_count, "groups": len(
        {tags for tags in machine.state_tags if tags}), "wall": {}, "cpu": {}}
    for path in paths:
        row["wall"][path] = statistics.median(wall[path])
        row["cpu"][path] = statistics.median(cpu[path])
    print(row, flush=True)
    return row


def table(rows: list[dict]) -> str:
    head = " | ".join(f"{p} wall / cpu" for p in VECTOR_PATHS)
    lines = [f"| case | states | groups | {head} |", "|" + "---|" * (3 + len(VECTOR_PATHS))]
    for row in rows:
        cells = [f"{row['wall'][p]:.2f} / {row['cpu'][p]:.2f}" if p in row["wall"] else "-"
                 for p in VECTOR_PATHS]
        lines.append(f"| {row['label']} | {row['states']} | {row['groups']} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--size", type=int, default=16 << 20)
    parser.add_argument("--work", type=Path, default=REPO / "build" / "bench-fsm")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    rows = [bench_case(label, machine, data, args)
            for label, machine, data in cases(args.size, args.work) if label in LABELS]
    text = ("# boostfsm: `enum` at one thread under each SIMD path\n\n"
            f"{machine_description()}. Inputs of {args.size >> 20} MiB; GB/s, medians over "
            f"{args.rounds} rounds of fresh processes alternating between the paths, each "
            f"the runner's median of {args.repeat} runs (wall) and the process's CPU-time "
            "rate (cpu).\n\n" + table(rows))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "fsm_simd_paths.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
