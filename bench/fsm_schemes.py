"""boostfsm C++ schemes on 64 MiB inputs: GB/s of every scheme at 1 and 2 threads, the
speedup over `seq`, Hyperscan side by side for the pattern sets, per-chunk phase times
and from them the projected speedup on 16 and 64 cores.

    .venv/bin/python bench/fsm_schemes.py [--quick] [--size BYTES] [--repeat K]   (make bench-fsm)

--quick: 8 MiB inputs and medians of 3, results in bench/results/quick/ (a few
minutes once the projects are built and cached).

Writes bench/results/fsm.md and bench/results/fsm_scaling.png. Machines: every sample,
and a dozen real regexes of rebar (those the language accepts) over rebar's haystacks.
Projection: the driver runs the scheme with 4P chunks on one thread, once to fault the
input's pages in (discarded), then PROFILE_RUNS times; each work unit (a group of 4
interleaved chunks) and each sequential phase takes its median over the runs. A
parallel phase on P cores takes the longest-processing-time schedule of its units onto
P cores plus FORK_JOIN seconds; sequential phases add as measured (the final sum of
per-thread counts runs in parallel over states, so on P cores each core adds as many
counts as the one thread measured did). Not modelled:
memory bandwidth (the report gives the input rate each projection implies), caches
shared between cores, and turbo frequencies falling as more cores run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "samples"), str(REPO / "bench")]

import fsm_dozen_regexes  # noqa: E402
import inputs  # noqa: E402

from parafuse.emitters.fsm.blob import machine_blob  # noqa: E402
from parafuse.emitters.fsm.project import (  # noqa: E402
    ProjectRequest,
    cached_project,
    table_driver,
)
from parafuse.emitters.toolchain.cmake import cache_root  # noqa: E402
from parafuse.fsm_compiler.pipeline import analyse_for_project, compile_file  # noqa: E402
from parafuse.grammar.diagnostics import SourceFile  # noqa: E402

SCHEMES = ("seq", "enum", "fused", "spec", "hspec", "auto")
RESULTS = REPO / "bench" / "results"
PROFILE_RUNS = 5
FORK_JOIN = 20e-6  # seconds per parallel phase: an OpenMP fork and barrier on 64 cores
REBAR = fsm_dozen_regexes.DATA


def machines_and_inputs(size: int, work: Path) -> list[tuple[str, object, Path, list | None]]:
    """(label, machine, input path, hyperscan patterns or None) for every benchmark case."""
    cases = []
    for sample in sorted((REPO / "samples").glob("*.fsm")):
        text = sample.read_text(encoding="latin-1")
        machine = compile_file(SourceFile(str(sample), text)).machines[0]
        path = work / f"{sample.stem}.txt"
        if not path.exists() or path.stat().st_size < size:
            path.write_bytes(inputs.GENERATORS[sample.stem](size))
        patterns = None
        if machine.kind == "patterns":
            fsm_file = compile_file(SourceFile(str(sample), text)).fsm_file
            patterns = [(p.flags or "-", p.text) for p in fsm_file.machines[0].patterns]
        cases.append((sample.stem, machine, path, patterns))
    chosen = fsm_dozen_regexes.chosen_patterns()
    source = fsm_dozen_regexes.source_text(chosen)
    machine = compile_file(SourceFile("rebar_dozen.fsm", source)).machines[0]
    haystack = (REBAR / "sherlock.txt").read_bytes() + (
        REBAR / "opensubtitles-en-sampled.txt").read_bytes()
    path = work / "rebar_haystacks.txt"
    if not path.exists():
        path.write_bytes((haystack * (size // len(haystack) + 1))[:size])
    cases.append(("rebar_dozen", machine, path, [(flags or "-", regex) for _, regex, flags
                                                 in chosen]))
    return cases


def run_scheme(runner: Path, data: Path, scheme: str, threads: int, repeat: int) -> dict:
    done = subprocess.run([str(runner), str(data), "--json", "--scheme", scheme, "--threads",
                           str(threads), "--repeat", str(repeat)],
                          capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        return {"error": done.stderr.strip()}
    return json.loads(done.stdout)


def profile(driver: Path, blob: Path, data: Path, scheme: str, cores: int) -> dict:
    """The scheme's phases with 4 * cores chunks on one thread: medians of PROFILE_RUNS."""
    done = subprocess.run([str(driver), str(blob), str(data), "--profile",
                           *[f"{scheme}:1:{4 * cores}"] * (1 + PROFILE_RUNS)],
                          capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        return {"error": done.stderr}
    runs = [json.loads(line) for line in done.stdout.splitlines()][1:]
    shape = [(p["name"], len(p["units"])) for p in runs[0]["phases"]]
    runs = [run for run in runs if [(p["name"], len(p["units"])) for p in run["phases"]] == shape]
    phases = []
    for index, phase in enumerate(runs[0]["phases"]):
        same = [run["phases"][index] for run in runs]
        phases.append({"name": phase["name"], "parallel": phase["parallel"],
                       "seconds": statistics.median(p["seconds"] for p in same),
                       "units": [statistics.median(units) for units in
                                 zip(*(p["units"] for p in same))]})
    return {**runs[0], "phases": phases}


def projected_seconds(phases: list[dict], cores: int) -> float:
    total = 0.0
    for phase in phases:
        if not phase["parallel"]:
            total += phase["seconds"] + (FORK_JOIN if phase["name"] == "reduce" else 0)
            continue
        loads = [0.0] * cores
        for unit in sorted(phase["units"], reverse=True):
            loads[loads.index(min(loads))] += unit
        total += max(loads) + FORK_JOIN
    return total


def hyperscan(patterns: list, data: Path, repeat: int, work: Path) -> dict | None:
    header = Path("/usr/include/hs/hs.h")
    if not header.exists():
        return None
    binary = cache_root() / "fsm_hyperscan_count"
    if not binary.exists():
        subprocess.run(["gcc", "-O2", str(REPO / "bench" / "fsm_hyperscan_count.c"), "-o",
                        str(binary), "-lhs"], check=True)
    listing = work / f"{data.stem}.patterns"
    listing.write_text("".join(f"{flags}\t{regex}\n" for flags, regex in patterns))
    done = subprocess.run([str(binary), str(listing), str(data), str(repeat)],
                          capture_output=True, text=True, timeout=900)
    return json.loads(done.stdout) if done.returncode == 0 else {"error": done.stderr}


def bench_case(case, repeat: int, work: Path, driver: Path) -> dict:
    label, machine, data, patterns = case
    sample = data.read_bytes()[:1 << 20]
    began = time.perf_counter()
    analysis = analyse_for_project(machine, sample)
    project = cached_project(ProjectRequest(machine, f"{label}.fsm", analysis))
    runner = project / "build" / f"{machine.name}_run"
    row = {"label": label, "states": machine.state_count, "classes": machine.class_count,
           "build_seconds": time.perf_counter() - began, "bytes": data.stat().st_size,
           "runs": {}, "projection": {}}
    for scheme in SCHEMES:
        for threads in (1, 2):
            row["runs"][f"{scheme}/{threads}"] = run_scheme(runner, data, scheme, threads, repeat)
            print(label, scheme, threads, row["runs"][f"{scheme}/{threads}"].get("gbps"),
                  flush=True)
    blob = work / f"{label}.blob"
    blob.write_bytes(machine_blob(machine, analysis))
    for scheme in SCHEMES[1:]:
        for cores in (16, 64):
            measured = profile(driver, blob, data, scheme, cores)
            if "phases" in measured:
                row["projection"][f"{scheme}/{cores}"] = {
                    "seconds": projected_seconds(measured["phases"], cores),
                    "scheme": measured["scheme"],
                    "phases": {p["name"]: round(p["seconds"], 6) for p in measured["phases"]}}
    if patterns:
        row["hyperscan"] = hyperscan(patterns, data, repeat, work)
    return row


def machine_description() -> str:
    cpu = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    memory = int(Path("/proc/meminfo").read_text().split()[1]) // (1 << 20)
    cxx = subprocess.run(["c++", "--version"], capture_output=True, text=True).stdout
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    return (f"{cpu}, {os.cpu_count()} logical cores, {memory} GiB RAM, {platform.system()} "
            f"{platform.release()}, {cxx.splitlines()[0]}, Python {platform.python_version()}; "
            f"load average when it finished: {load}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="8 MiB inputs, 3 runs, results in bench/results/quick/")
    parser.add_argument("--size", type=int, default=None, help="bytes per input (64 MiB)")
    parser.add_argument("--repeat", type=int, default=None, help="runs per median (5)")
    parser.add_argument("--work", type=Path, default=REPO / "build" / "bench-fsm")
    args = parser.parse_args()
    size = args.size or ((8 if args.quick else 64) << 20)
    repeat = args.repeat or (3 if args.quick else 5)
    work = args.work / "quick" if args.quick else args.work
    results = RESULTS / "quick" if args.quick else RESULTS
    work.mkdir(parents=True, exist_ok=True)
    driver = table_driver()
    rows = [bench_case(case, repeat, work, driver) for case in machines_and_inputs(size, work)]
    results.mkdir(parents=True, exist_ok=True)
    (results / "fsm.json").write_text(json.dumps(rows, indent=1) + "\n")
    from fsm_report_md import write_report

    write_report(rows, machine_description(), results)
    print(f"wrote {results / 'fsm.md'}")


if __name__ == "__main__":
    main()
