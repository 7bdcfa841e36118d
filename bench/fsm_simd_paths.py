"""boostfsm `enum` at one thread under each SIMD path side by side, for machines of up to 16
states (where several paths run the same plan) and perm40 (a check of the path past 16):
fresh runner processes alternating between the columns round after round, so that every
column meets the same load, each process `--repeat K` runs.

    .venv/bin/python bench/fsm_simd_paths.py [--rounds N] [--repeat K] [--size BYTES]
                                             [--against REV]

(also run by `make bench-fsm`). Columns: `auto` (the path the plan takes on this CPU),
then each vector path forced; with `--against REV` first `REV auto`: the same project
built with the C++ runtime of git revision REV (cpp_runtime/fsm as REV has it), so that
kernels are compared before and after a change in one run.

Per column: the median over the rounds of the runner's own median GB/s (wall clock, the
whole `enum` run: plan, chunks, compose, counts) and of the CPU-time rate of the whole
process (repeat x input bytes / its user + system seconds: includes starting and mapping
the input, so slightly under the run's own). The shared machine's load moves single runs
by up to 2x: compare the columns' ratios within one table. Writes
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

from parafuse.emitters.fsm.project import (  # noqa: E402
    ProjectRequest,
    cached_project,
    cmake_arguments,
    option_arguments,
    project_files,
)
from parafuse.emitters.toolchain.cmake import cached_build  # noqa: E402
from parafuse.fsm_compiler.pipeline import analyse_for_project  # noqa: E402

RESULTS = REPO / "bench" / "results"
LABELS = ("perm12", "perm12_3groups", "random10", "csv", "clexer_headers", "perm40")
VECTOR_PATHS = [path for path in PATHS if path not in ("scalar", "none")]
# The words of each path in the JSON reason (cpp_runtime/fsm/simd/enum.hpp).
PATH_WORDS = {"ssse3": "SSSE3", "avx2": "AVX2", "avx512vl": "AVX-512VL",
              "avx512vbmi": "AVX-512 VBMI"}


def timed_run(runner: Path, data: Path, path: str, repeat: int) -> tuple[float, float, str]:
    """(the runner's median GB/s, the process's CPU-time GB/s, the path's words in the
    reason) of `enum`, forced to `path` unless it is empty."""
    command = [str(runner), str(data), "--json", "--scheme", "enum", "--threads", "1",
               "--repeat", str(repeat)]
    env = {key: value for key, value in os.environ.items() if key != "PARAFUSE_FSM_SIMD"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True, timeout=900,
                          env=dict(env, PARAFUSE_FSM_SIMD=path) if path else env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{path or 'auto'}: {done.stderr.strip()}")
    reason = json.loads(done.stdout)["reason"]
    assert not path or PATH_WORDS[path] in reason, reason
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    words = reason.split("(", 1)[1].split(")", 1)[0] if "SIMD enumeration (" in reason else "-"
    return json.loads(done.stdout)["gbps"], repeat * data.stat().st_size / cpu / 1e9, words


def runtime_at(rev: str) -> dict[str, str | bytes]:
    """The C++ runtime's fsm/ folder (its subfolders included) as git revision `rev` has it,
    as project files."""
    def git(*words: str) -> bytes:
        return subprocess.run(["git", "-C", str(REPO), *words], capture_output=True,
                              check=True).stdout
    names = git("ls-tree", "-r", "--name-only", f"{rev}:cpp_runtime/fsm").decode().split()
    return {f"runtime/fsm/{name}": git("show", f"{rev}:cpp_runtime/fsm/{name}")
            for name in names}


def runner_against(request: ProjectRequest, rev: str) -> Path:
    """The runner of `request` built with the runtime of revision `rev` (cached by content)."""
    files = {name: text for name, text in project_files(request).items()
             if not name.startswith("runtime/fsm/")}
    files.update(runtime_at(rev))
    name = request.machine.name
    folder = cached_build(f"fsm-{name}-against", files,
                          cmake_arguments(request.python, "", False) +
                          option_arguments(name, "", False))
    return folder / "build" / f"{name}_run"


def bench_case(label: str, machine, data: Path, args) -> dict:
    request = ProjectRequest(machine, f"{label}.fsm",
                             analyse_for_project(machine, data.read_bytes()[:1 << 20]))
    runner = cached_project(request) / "build" / f"{machine.name}_run"
    columns = [("auto", runner, "")] + [
        (path, runner, path) for path in VECTOR_PATHS
        if machine.state_count <= PATH_MOST_STATES[path]]
    if args.against:
        columns.insert(0, (f"{args.against} auto", runner_against(request, args.against), ""))
    wall: dict[str, list[float]] = {column: [] for column, _, _ in columns}
    cpu: dict[str, list[float]] = {column: [] for column, _, _ in columns}
    row = {"label": label, "states": machine.state_count, "groups": len(
        {tags for tags in machine.state_tags if tags}), "wall": {}, "cpu": {}, "ran": {}}
    for _ in range(args.rounds):
        for column, exe, path in columns:
            rate, cpu_rate, row["ran"][column] = timed_run(exe, data, path, args.repeat)
            wall[column].append(rate)
            cpu[column].append(cpu_rate)
    for column, _, _ in columns:
        row["wall"][column] = statistics.median(wall[column])
        row["cpu"][column] = statistics.median(cpu[column])
    print(row, flush=True)
    return row


def table(rows: list[dict]) -> str:
    columns = list(dict.fromkeys(column for row in rows for column in row["wall"]))
    head = " | ".join(f"{column} wall / cpu" for column in columns)
    lines = [f"| case | states | groups | {head} |", "|" + "---|" * (3 + len(columns))]
    for row in rows:
        cells = [f"{row['wall'][c]:.2f} / {row['cpu'][c]:.2f}" if c in row["wall"] else "-"
                 for c in columns]
        lines.append(f"| {row['label']} | {row['states']} | {row['groups']} | "
                     + " | ".join(cells) + " |")
    autos = [column for column in columns if column.endswith("auto")]
    lines += ["", "The path each `auto` column ran:", ""]
    lines += [f"- {row['label']}: " + "; ".join(f"{column}: {row['ran'][column]}"
                                               for column in autos) for row in rows]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--size", type=int, default=16 << 20)
    parser.add_argument("--against", default="", help="a git revision's runtime, side by side")
    parser.add_argument("--work", type=Path, default=REPO / "build" / "bench-fsm")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    rows = [bench_case(label, machine, data, args)
            for label, machine, data in cases(args.size, args.work) if label in LABELS]
    text = ("# boostfsm: `enum` at one thread under each SIMD path\n\n"
            f"{machine_description()}. Inputs of {args.size >> 20} MiB; GB/s, medians over "
            f"{args.rounds} rounds of fresh processes alternating between the columns, each "
            f"the runner's median of {args.repeat} runs (wall) and the process's CPU-time "
            "rate (cpu).\n\n" + table(rows))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "fsm_simd_paths.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
