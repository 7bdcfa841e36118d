"""`auto` judged on a corpus it was not built from (bench/fsm_auto_corpus_machines.py: 60
machines of the classes users have, seeds of their own): for every machine at 1 and 2
threads, each fixed scheme and `auto` in fresh processes, and `auto`'s speed as a share
of the best fixed scheme's; then the distribution (min, 10th percentile, median).

    .venv/bin/python bench/fsm_auto_corpus.py [--mib 32] [--repeat 3] [--only LABEL] [--record]

Each run is one process of the table-driven drivers (one build for every machine: the
same runtime a machine's runner compiles, the tables loaded at run time), started as
`boostfsm run` starts runners (waiting threads sleep); its time is the sum of the run's
phases (--profile), so reading the input is not counted, and `auto`'s own choosing is.
A fixed scheme that runs past LIMIT times seq's time is stopped and counted as that slow
(enumeration of a big machine whose paths never meet can take minutes). `auto` is judged
by the scheme it picked: that scheme's own runs (measured beside the others, so one noisy
sample of a 5 ms run does not decide) plus what choosing cost in auto's runs, where the
fixed scheme ran the same phases; a rule set's mixture of schemes, and a scheme auto ran
another way (its `enum` may take the merging paths where `--scheme enum` takes SIMD
enumeration), by auto's own runs. With --record
the table goes to bench/results/fsm_auto_corpus.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "bench")]

from fsm_auto_corpus_machines import Case, corpus  # noqa: E402
from fsm_schemes import machine_description  # noqa: E402

from parafuse.emitters.fsm.blob import machine_blob  # noqa: E402
from parafuse.emitters.fsm.engine_set_blob import engine_set_blob  # noqa: E402
from parafuse.emitters.fsm.project import engine_set_driver, table_driver  # noqa: E402
from parafuse.emitters.toolchain.openmp import runner_environment  # noqa: E402
from parafuse.fsm_compiler.engines.engines import EngineSet  # noqa: E402
from parafuse.fsm_compiler.pipeline import analyse_for_project  # noqa: E402

FIXED = ("seq", "enum", "fused", "spec", "hspec")
THREADS = (1, 2)
LIMIT = 8.0  # a fixed scheme slower than this many times seq is stopped
RESULTS = REPO / "bench" / "results"


def driver_command(case: Case, blob: Path, data: Path) -> list[str]:
    if isinstance(case.machine, EngineSet):
        return [str(engine_set_driver()), str(blob), str(len(case.machine.tag_names)), str(data)]
    return [str(table_driver()), str(blob), str(data)]


def write_blob(case: Case, path: Path) -> None:
    analysis = analyse_for_project(case.machine, None)  # as `boostfsm run` builds it
    path.write_bytes(engine_set_blob(case.machine, analysis) if isinstance(case.machine, EngineSet)
                     else machine_blob(case.machine, analysis))


@dataclass(frozen=True)
class Run:
    seconds: float  # the run's phases, choosing included
    choosing: float  # auto's phases that chose ("choose..." phases of every engine)
    scheme: str
    path: tuple[str, ...] = ()  # the names of the phases that ran the scheme


def one_run(command: list[str], config: str, limit_s: float) -> Run:
    """One fresh process; infinitely slow past `limit_s`."""
    try:
        done = subprocess.run(command + ["--profile", config], capture_output=True, text=True,
                              env=runner_environment(), timeout=limit_s, check=True)
    except subprocess.TimeoutExpired:
        return Run(float("inf"), 0.0, "")
    result = json.loads(done.stdout)
    phases = result["phases"]
    return Run(sum(p["seconds"] for p in phases),
               sum(p["seconds"] for p in phases if "choose" in p["name"]), result["scheme"],
               tuple(p["name"] for p in phases if "choose" not in p["name"]))


def measured(command: list[str], scheme: str, threads: int, repeat: int,
             limit_s: float) -> Run:
    """Medians of `repeat` runs; the scheme the last one ran."""
    runs = [one_run(command, f"{scheme}:{threads}:0", limit_s) for _ in range(repeat)]
    return Run(statistics.median(run.seconds for run in runs),
               statistics.median(run.choosing for run in runs), runs[-1].scheme,
               runs[-1].path)


def judge(case: Case, work: Path, size: int, repeat: int) -> list[dict]:
    blob, data = work / f"{case.label}.blob", work / f"{case.label}.in"
    write_blob(case, blob)
    data.write_bytes(case.make_input(size)[:size])
    command = driver_command(case, blob, data)
    rows = []
    for threads in THREADS:
        seq = measured(command, "seq", threads, repeat, 600)
        runs = {"seq": seq}
        for scheme in FIXED[1:]:
            runs[scheme] = measured(command, scheme, threads, repeat,
                                    max(2.0, LIMIT * seq.seconds))
        times = {scheme: run.seconds for scheme, run in runs.items()}
        auto = measured(command, "auto", threads, repeat, 600)
        best = min(times, key=times.get)
        # auto's pick, judged by that scheme's own runs (the same noise as the best's) plus
        # what choosing cost where they ran the same way (the same phases); a set's mixture
        # of schemes, or a scheme run another way (`enum` that took the merging paths where
        # the fixed scheme took SIMD enumeration), by auto's own runs
        picked = auto.scheme.split(" ")[0]
        same_way = picked in runs and runs[picked].path == auto.path
        auto_seconds = times[picked] + auto.choosing if same_way else auto.seconds
        rows.append({"label": case.label, "kind": case.kind, "threads": threads,
                     "best": best, "best_gbs": size / times[best] / 1e9,
                     "auto": auto.scheme, "auto_gbs": size / auto_seconds / 1e9,
                     "choosing_share": auto.choosing / auto_seconds,
                     "share": times[best] / auto_seconds,
                     "gbs": {s: size / t / 1e9 for s, t in times.items()}})
        print(f"{case.label:18} {case.kind:15} T={threads}  best {best:5} "
              f"{rows[-1]['best_gbs']:6.2f} GB/s  auto {auto.scheme:12} "
              f"{rows[-1]['auto_gbs']:6.2f} GB/s (choosing {100 * rows[-1]['choosing_share']:.1f}%)"
              f"  x{rows[-1]['share']:.2f}", flush=True)
    return rows


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


def report(rows: list[dict], size: int, repeat: int) -> str:
    lines = [f"# `auto` on a corpus it was not built from ({len(rows) // len(THREADS)} machines)",
             "", f"machine: {machine_description()}",
             f"{size >> 20} MiB inputs, medians of {repeat} fresh processes per scheme; "
             "share = best fixed scheme's time / auto's time", "", "## Distribution", "",
             "| threads | min | 10th percentile | median | machines under 0.9 |",
             "|---|---|---|---|---|"]
    for threads in THREADS:
        shares = [row["share"] for row in rows if row["threads"] == threads]
        under = sum(share < 0.9 for share in shares)
        lines.append(f"| {threads} | {min(shares):.2f} | {quantile(shares, 0.1):.2f} | "
                     f"{statistics.median(shares):.2f} | {under} of {len(shares)} |")
    lines += ["", "## Every machine", "",
              "| machine | class | threads | best fixed | GB/s | auto ran | GB/s | choosing | "
              "share |", "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['label']} | {row['kind']} | {row['threads']} | {row['best']} | "
                     f"{row['best_gbs']:.2f} | {row['auto']} | {row['auto_gbs']:.2f} | "
                     f"{100 * row['choosing_share']:.1f}% | {row['share']:.2f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", action="append", help="run only these machines (labels)")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    size = args.mib << 20
    cases = [case for case in corpus() if not args.only or case.label in args.only]
    rows = []
    with tempfile.TemporaryDirectory(prefix="fsm-auto-corpus-") as folder:
        for case in cases:
            rows += judge(case, Path(folder), size, args.repeat)
    text = report(rows, size, args.repeat)
    print(text)
    if args.record:
        (RESULTS / "fsm_auto_corpus.md").write_text(text)


if __name__ == "__main__":
    main()
