"""boostfsm with one core busy: does a parallel run still beat one thread when another
process holds a core? Every sample and two real rule sets (rebar over its haystacks,
Nosey Parker over Python standard-library source with no secrets planted), `auto` at 1
thread and at 2 threads, fresh processes, medians of --repeat runs, with a Python busy
loop running for the whole measurement. The runners run as `boostfsm run` runs them
(OMP_WAIT_POLICY=passive, emitters/toolchain/openmp.py: waiting threads sleep), and at 2 threads
also with OpenMP's default (waiting threads spin first), side by side in the same run.

    .venv/bin/python bench/fsm_busy.py [--mib 32] [--repeat 7] [--record] [--idle]

--idle: the same rows without the busy loop. With --record the table goes to
bench/results/fsm_busy.md (fsm_idle.md with --idle).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "samples"), str(REPO / "bench")]

import fsm_ruleset_sources as sources  # noqa: E402
import inputs  # noqa: E402
from fsm_rulesets import rebar_input, stdlib_input  # noqa: E402
from fsm_schemes import machine_description  # noqa: E402

from parafuse.emitters.fsm.project import ProjectRequest, cached_project  # noqa: E402
from parafuse.emitters.toolchain.cmake import cache_root  # noqa: E402
from parafuse.emitters.toolchain.openmp import runner_environment  # noqa: E402
from parafuse.fsm_compiler.pipeline import analyse_for_project, compile_file  # noqa: E402
from parafuse.grammar.diagnostics import SourceFile  # noqa: E402

RESULTS = REPO / "bench" / "results"
SPINNING = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}  # OpenMP's default


def cases(size: int, work: Path) -> list[tuple[str, str, str, Path]]:
    """(label, source file name, .fsm text, input path) for every sample and rule set."""
    found = []
    for sample in sorted((REPO / "samples").glob("*.fsm")):
        path = work / f"{sample.stem}.txt"
        if not path.exists() or path.stat().st_size != size:
            path.write_bytes(inputs.GENERATORS[sample.stem](size))
        found.append((sample.stem, str(sample), sample.read_text(encoding="latin-1"), path))
    for label, rules, data in (("rebar", sources.rebar_rules(), rebar_input),
                               ("noseyparker", sources.noseyparker_rules(), None)):
        kept = sources.parsable(rules)
        path = work / f"{label}.input"
        if not path.exists() or path.stat().st_size != size:
            path.write_bytes(data(size) if data else stdlib_input(size, []))
        found.append((label, f"{label}.fsm", sources.fsm_source(label, kept), path))
    return found


def runner_of(name: str, text: str) -> Path:
    machine = compile_file(SourceFile(name, text)).machines[0]
    project = cached_project(ProjectRequest(machine, name, analyse_for_project(machine, None)))
    return project / "build" / f"{machine.name}_run"


def seconds(runner: Path, data: Path, threads: int, repeat: int, env: dict[str, str]) -> float:
    """Median seconds of `repeat` runs, each a fresh process."""
    times = []
    for _ in range(repeat):
        done = subprocess.run([str(runner), str(data), "--json", "--threads", str(threads)],
                              capture_output=True, text=True, timeout=900, check=True, env=env)
        times.append(json.loads(done.stdout)["seconds"])
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--idle", action="store_true", help="no busy loop")
    args = parser.parse_args()
    work = cache_root() / "bench-fsm-busy"
    work.mkdir(parents=True, exist_ok=True)
    runners = [(label, runner_of(name, text), path)
               for label, name, text, path in cases(args.mib << 20, work)]
    busy = None if args.idle else subprocess.Popen([sys.executable, "-c", "while True: pass"])
    rows = []
    try:
        for label, runner, path in runners:
            one = seconds(runner, path, 1, args.repeat, runner_environment())
            asleep = seconds(runner, path, 2, args.repeat, runner_environment())
            spinning = seconds(runner, path, 2, args.repeat, SPINNING)
            rows.append((label, one, asleep, spinning))
            print(f"{label}: {one:.4f} {asleep:.4f} {spinning:.4f}", flush=True)
    finally:
        if busy:
            busy.kill()
    held = "with one core held by a busy loop" if busy else "idle (no busy loop)"
    lines = [f"# boostfsm `auto`, {held}",
             "",
             f"{args.mib} MiB inputs, medians of {args.repeat} fresh processes; seconds, and "
             "each 2-thread time as a speedup over 1 thread.",
             "",
             "| case | 1 thread | 2 threads | 2 threads, waiting threads spinning |",
             "|---|---|---|---|"]
    for label, one, asleep, spinning in rows:
        lines.append(f"| {label} | {one:.4f} s | {asleep:.4f} s ({one / asleep:.2f}x) | "
                     f"{spinning:.4f} s ({one / spinning:.2f}x) |")
    lines += ["", f"Machine: {machine_description()}."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.record:
        (RESULTS / ("fsm_idle.md" if args.idle else "fsm_busy.md")).write_text(text)


if __name__ == "__main__":
    main()
