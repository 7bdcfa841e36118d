"""boostfsm SIMD enumeration's kernels alone, for machines of up to 16 states: the plan of
each bench case, 4 chunks of one input summarised by `simd_summarize` (one thread's work
in `enum`), under each vector path this CPU runs, timed by thread CPU time and wall
clock (bench/fsm_simd_kernel.cpp). Paths alternate run after run, so that each meets the
same load; medians over the rounds. The last column, `avx2 0 groups`, runs each plan with
its groups dropped: the shuffles alone, the rate no counting kernel can pass on this CPU.
With `--against REV` the same harness built with the C++ runtime of git revision REV adds
its columns (`REV avx2`, ...): kernels before
and after a change in one run. End states and counts are compared between every column
that counts all the plan's groups in its pass.

    .venv/bin/python bench/fsm_simd_kernel.py [--rounds N] [--bytes B] [--against REV]

(also run by `make bench-fsm`)

Writes bench/results/fsm_simd_kernel.md (fsm_simd_kernel_avx2.md on a CPU without AVX-512).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "bench"), str(REPO / "samples")]

from fsm_schemes import machine_description  # noqa: E402
from fsm_simd import PATHS, cases  # noqa: E402

RESULTS = REPO / "bench" / "results"
KERNEL_PATHS = [path for path in PATHS
                if path in ("ssse3", "avx2", "avx2/1", "avx512vl", "avx512vbmi")]
PAIRED = ("avx2", "avx2/1", "avx512vl")  # count up to 8 groups in the pass; the others up to 4
UNCOUNTED = "avx2 0 groups"  # the column of the plans without their groups


def without_groups(plan: str) -> str:
    """`plan` (plan_text) with no groups: the same rows, nothing counted."""
    header, rows = plan.split("\n", 1)
    return f"{header.split()[0]} 0\n{rows}"


def plan_text(machine) -> str:
    """The plan file of `machine` (fsm_simd_kernel.cpp): states renumbered as the runtime's
    plan does (cpp_runtime/fsm/simd/plan.hpp): non-reporting states first, then the
    reporting ones grouped by their tags in order of each group's first state."""
    tags = machine.state_tags
    order = [s for s in range(machine.state_count) if not tags[s]]
    groups: dict[tuple, list[int]] = {}
    for state in range(machine.state_count):
        if tags[state]:
            groups.setdefault(tags[state], []).append(state)
    lo = []
    for members in groups.values():
        lo.append(len(order))
        order += members
    to_plan = {state: lane for lane, state in enumerate(order)}
    rows = [to_plan[int(machine.transitions[state, machine.byte_class[byte]])]
            for byte in range(256) for state in order]
    return (f"{machine.state_count} {len(lo)} {' '.join(map(str, lo))}\n"
            + " ".join(map(str, rows)) + "\n")


def harness(runtime: Path, out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["c++", "-O3", "-DNDEBUG", "-std=c++17", "-fopenmp", f"-I{runtime}",
                    str(REPO / "bench" / "fsm_simd_kernel.cpp"), "-o", str(out)], check=True)
    return out


def runtime_at(rev: str, into: Path) -> Path:
    """cpp_runtime/fsm of git revision `rev`, written under `into`."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "cpp_runtime/fsm"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "cpp_runtime"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--runs", type=int, default=3, help="runs per process (median)")
    parser.add_argument("--bytes", type=int, default=4_000_000)
    parser.add_argument("--against", default="")
    parser.add_argument("--work", type=Path, default=REPO / "build" / "bench-fsm")
    args = parser.parse_args()
    work = args.work / "kernel"
    binaries = {"": harness(REPO / "cpp_runtime", work / "fsm_simd_kernel")}
    if args.against:
        old = runtime_at(args.against, work / args.against)
        binaries[f"{args.against} "] = harness(old, work / f"fsm_simd_kernel_{args.against}")
    names = [prefix + path for prefix in binaries for path in KERNEL_PATHS]
    names += [UNCOUNTED] if "avx2" in KERNEL_PATHS else []
    lines = ["| case | states | groups | " + " | ".join(f"{name} cpu / wall" for name in names)
             + " |", "|" + "---|" * (3 + len(names))]
    for label, machine, data in cases(16 << 20, args.work):
        if machine.state_count > 16:
            continue
        plan = work / f"{label}.plan"
        plan.write_text(plan_text(machine))
        groups = int(plan.read_text().split()[1])
        uncounted = work / f"{label}.g0.plan"
        uncounted.write_text(without_groups(plan.read_text()))
        columns = [(prefix + path, exe, path) for prefix, exe in binaries.items()
                   for path in KERNEL_PATHS]
        if "avx2" in KERNEL_PATHS:
            columns.append((UNCOUNTED, binaries[""], "avx2"))
        cpu: dict[str, list[float]] = {name: [] for name, _, _ in columns}
        wall: dict[str, list[float]] = {name: [] for name, _, _ in columns}
        checks: dict[str, str] = {}
        for _ in range(args.rounds):
            for name, exe, path in columns:
                name_of_path, _, stride = path.partition("/")  # avx2/1: one byte per step
                done = subprocess.run([str(exe), str(uncounted if name == UNCOUNTED else plan),
                                       str(data), name_of_path,
                                       str(args.runs), str(args.bytes)], capture_output=True,
                                      text=True,
                                      env=dict(os.environ, PARAFUSE_FSM_SIMD_STRIDE=stride))
                if done.returncode != 0:  # a path the older runtime lacks
                    continue
                rate, wall_rate, checks[name] = done.stdout.split()
                cpu[name].append(float(rate))
                wall[name].append(float(wall_rate))
        full = {checks[n] for n, _, path in columns
                if n in checks and n != UNCOUNTED and (path in PAIRED or groups <= 4)}
        assert len(full) == 1, (label, checks)
        cells = [f"{statistics.median(cpu[n]):.2f} / {statistics.median(wall[n]):.2f}"
                 if cpu[n] else "-" for n, _, _ in columns]
        lines.append(f"| {label} | {machine.state_count} | {groups} | " + " | ".join(cells)
                     + " |")
        print(lines[-1], flush=True)
    avx512 = "avx512vl" in KERNEL_PATHS  # CPUs without it keep a record of their own
    text = ("# boostfsm: SIMD enumeration's kernels alone, 4 chunks, one thread"
            + ("" if avx512 else " (a CPU with AVX2 and no AVX-512)") + "\n\n"
            f"{machine_description()}. The first {args.bytes} bytes of each input; GB/s, "
            f"medians over {args.rounds} rounds (each the median of {args.runs} runs in one "
            "process) of thread CPU time / wall clock, the columns alternating (`avx2/1`: "
            "one byte per step, where `avx2` takes two for up to one group; `avx2 0 groups`: the "
            "plan with its groups dropped, the shuffles alone).\n\n"
            + "\n".join(lines) + "\n")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / ("fsm_simd_kernel.md" if avx512 else "fsm_simd_kernel_avx2.md")).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
