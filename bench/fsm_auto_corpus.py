"""`auto` judged on a corpus it was not built from (bench/fsm_auto_corpus_machines.py: 60
machines of the classes users have, seeds of their own): for every machine at 1 and 2
threads, each fixed scheme and `auto` in fresh processes, and `auto`'s speed as a share
of the best fixed scheme's; then the distribution (min, 10th percentile, median).

    .venv/bin/python bench/fsm_auto_corpus.py [--mib 32] [--repeat 5] [--only LABEL] [--record]

Each run is one process of the table-driven drivers (one build for every machine: the
same runtime a machine's runner compiles, the tables loaded at run time), started as
`boostfsm run` starts runners (waiting threads sleep); its time is the sum of the run's
phases (--profile), so reading the input is not counted, and `auto`'s own choosing is.
The runs go in rounds, each running every fixed scheme and `auto` once in a rotating
order, and each scheme's time is taken two ways: the fastest of its runs (what the
machine gives when nothing else holds it: on a 2-core VM a two-thread run takes 11 or 20
ms from one process to the next) and their median. A fixed scheme that runs past LIMIT
times seq's time is stopped and counted as that slow (enumeration of a big machine whose
paths never meet can take minutes). `auto` is judged by the scheme it picked in each of
its runs: that scheme's own runs plus what choosing cost in auto's run, where the fixed
scheme ran the same phases; a rule set's mixture of schemes, and a scheme auto ran another
way (its `enum` may take the merging paths where `--scheme enum` takes SIMD enumeration),
by auto's own runs. With --record the table goes to bench/results/fsm_auto_corpus.md.
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


STATISTICS = {"fastest": min, "median": statistics.median}


def rounds(command: list[str], threads: int, repeat: int) -> dict[str, list[Run]]:
    """`repeat` rounds, each running seq, every fixed scheme and auto once, in an order that
    rotates from round to round: a slow spell of the machine (on a 2-core VM the second
    core comes and goes) falls on every scheme alike instead of on one scheme's runs."""
    configs = (*FIXED, "auto")
    runs: dict[str, list[Run]] = {config: [] for config in configs}
    limit = 600.0
    for round_ in range(repeat):
        for config in configs[round_ % len(configs):] + configs[:round_ % len(configs)]:
            run = one_run(command, f"{config}:{threads}:0", limit)
            runs[config].append(run)
            if config == "seq" and round_ == 0:
                limit = max(2.0, LIMIT * run.seconds)
    return runs


def auto_seconds(runs: dict[str, list[Run]], stat) -> float:
    """auto judged by what it picked in each of its runs: the picked scheme's time over its
    own runs (the same noise as the best's) plus that run's choosing, where the fixed
    scheme ran the same phases; a set's mixture of schemes, or a scheme run another way
    (`enum` that took the merging paths where the fixed scheme took SIMD enumeration), by
    auto's own runs that ran the same way. The median over auto's runs, so a pick that
    varies from run to run counts as often as it is made."""
    costs = []
    for run in runs["auto"]:
        picked = run.scheme.split(" ")[0]
        if picked in FIXED and all(fixed.path == run.path for fixed in runs[picked]):
            costs.append(stat([fixed.seconds for fixed in runs[picked]]) + run.choosing)
        else:
            costs.append(stat([other.seconds for other in runs["auto"]
                               if (other.scheme, other.path) == (run.scheme, run.path)]))
    return statistics.median(costs)


def judge(case: Case, work: Path, size: int, repeat: int) -> list[dict]:
    blob, data = work / f"{case.label}.blob", work / f"{case.label}.in"
    write_blob(case, blob)
    data.write_bytes(case.make_input(size)[:size])
    command = driver_command(case, blob, data)
    rows = []
    for threads in THREADS:
        runs = rounds(command, threads, repeat)
        row = {"label": case.label, "kind": case.kind, "threads": threads,
               "auto": " / ".join(sorted({run.scheme for run in runs["auto"]})),
               "choosing": statistics.median(run.choosing for run in runs["auto"])}
        for name, stat in STATISTICS.items():
            times = {scheme: stat([run.seconds for run in runs[scheme]]) for scheme in FIXED}
            best = min(times, key=times.get)
            auto = auto_seconds(runs, stat)
            row[name] = {"best": best, "best_gbs": size / times[best] / 1e9,
                         "auto_gbs": size / auto / 1e9, "share": times[best] / auto,
                         "choosing_share": row["choosing"] / auto,
                         "gbs": {s: size / t / 1e9 for s, t in times.items()}}
        rows.append(row)
        fastest, median = row["fastest"], row["median"]
        print(f"{case.label:18} {case.kind:15} T={threads}  best {fastest['best']:5} "
              f"{fastest['best_gbs']:6.2f} GB/s  auto {row['auto']:12} "
              f"{fastest['auto_gbs']:6.2f} GB/s (choosing {100 * fastest['choosing_share']:.1f}%)"
              f"  x{fastest['share']:.2f} (medians: x{median['share']:.2f})", flush=True)
    return rows


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


def report(rows: list[dict], size: int, repeat: int) -> str:
    lines = [f"# `auto` on a corpus it was not built from ({len(rows) // len(THREADS)} machines)",
             "", f"machine: {machine_description()}",
             f"{size >> 20} MiB inputs, {repeat} rounds of fresh processes, each round running "
             "every fixed scheme and auto once in a rotating order; share = best fixed "
             "scheme's time / auto's time, each scheme's time the fastest of its runs (the "
             "machine's speed when nothing else held it) or their median", "",
             "## Distribution", "",
             "| threads | statistic | min | 10th percentile | median | machines under 0.9 |",
             "|---|---|---|---|---|---|"]
    for threads in THREADS:
        for name in STATISTICS:
            shares = [row[name]["share"] for row in rows if row["threads"] == threads]
            under = sum(share < 0.9 for share in shares)
            lines.append(f"| {threads} | {name} | {min(shares):.2f} | "
                         f"{quantile(shares, 0.1):.2f} | {statistics.median(shares):.2f} | "
                         f"{under} of {len(shares)} |")
    lines += ["", "## Every machine (fastest runs; the share by medians beside it)", "",
              "| machine | class | threads | best fixed | GB/s | auto ran | GB/s | choosing | "
              "share | share by medians |", "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        fastest = row["fastest"]
        lines.append(f"| {row['label']} | {row['kind']} | {row['threads']} | "
                     f"{fastest['best']} | {fastest['best_gbs']:.2f} | {row['auto']} | "
                     f"{fastest['auto_gbs']:.2f} | {100 * fastest['choosing_share']:.1f}% | "
                     f"{fastest['share']:.2f} | {row['median']['share']:.2f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=5)
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
