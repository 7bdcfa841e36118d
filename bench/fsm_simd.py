"""boostfsm SIMD enumeration, measured `auto` and MPI ranks: every scheme side by side at 1
and 2 threads, `auto` against the best fixed scheme, `enum` under each SIMD path this CPU
runs and the merging scalar enumeration, the runner under `mpirun -n 1` and `-n 2`, and
projected 16/64-core speedups over `seq`.

    .venv/bin/python bench/fsm_simd.py [--quick] [--size BYTES] [--repeat K]   (make bench-fsm)

Cases: permutation machines of 12 states (1 and 3 report groups), 40, 100 and 200 states
over random letters, digits and punctuation (paths never merge; past 64 states only
AVX-512 VBMI runs them in vectors, with vpermi2b); a random 10-state machine; `csv`
(a machine that resets at every record); `clexer` (a mode tracker for C comments and
strings) over real C headers (/usr/include, read at bench time); `weblog` (a pattern set).
`--quick` (16 MiB inputs, about 1-2 minutes once the projects are built and cached, which
the first run does) keeps every case but measures projections for `enum` only.

GB/s are medians: each fixed scheme is the runner's median of --repeat runs in one
process; `auto` is also run as fresh processes of one run each (at least 15, median), so
that its choosing is paid every time (within one process a repeated run over the same
sample reuses its choice), and so is the best fixed scheme at each thread count, so that
`fresh auto / fresh best` compares two runs that both pay a fresh process's first touches
(the input's pages, the thread pool); the per-pair ratios' quartiles say how far one pair
moves from the next, and `auto` profiled in fresh table-driver processes says what
choosing itself costs (its `choose` phases against the whole run). The machine may be
shared and loaded: results/ says its load average; compare ratios, not absolute rates. Writes
bench/results/fsm_simd.md and fsm_simd.json (fsm_simd_quick.* with --quick).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "bench"), str(REPO / "samples")]

import inputs  # noqa: E402
from fsm_schemes import SCHEMES, machine_description, profile, projected_seconds  # noqa: E402
from permutation import permutation_source  # noqa: E402

from parafuse.emitters.fsm.blob import machine_blob  # noqa: E402
from parafuse.emitters.fsm.project import ProjectRequest, cached_project, table_driver  # noqa: E402
from parafuse.emitters.toolchain.mpirun import run_ranks  # noqa: E402
from parafuse.fsm_compiler.pipeline import analyse_for_project, compile_file  # noqa: E402
from parafuse.grammar.diagnostics import SourceFile  # noqa: E402

RESULTS = REPO / "bench" / "results"
PATH_FLAGS = {"scalar": set(), "ssse3": {"ssse3"}, "avx2": {"avx2"},
              "avx512vl": {"avx2", "avx512f", "avx512bw", "avx512vl"},
              "avx512vbmi": {"avx512f", "avx512bw", "avx512vbmi"}}
# The most states each forced path takes (fsm/simd/plan.hpp simd_path_most_states): past it,
# the table shows "-" (forced, `enum` would run the merging enumeration instead).
PATH_MOST_STATES = {"scalar": 256, "ssse3": 16, "avx2": 64, "avx2/1": 64, "avx512vl": 16,
                    "avx512vbmi": 256, "none": 1 << 32}
FIXED = [scheme for scheme in SCHEMES if scheme != "auto"]


def cpu_paths() -> list[str]:
    """The SIMD paths this CPU runs, `avx2/1` after `avx2` (one byte per step where `avx2`
    takes two: PARAFUSE_FSM_SIMD_STRIDE=1), then `none` (the merging scalar enumeration)."""
    flags = set()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    paths = [path for path, needs in PATH_FLAGS.items() if needs <= flags]
    with_strides = [p for path in paths for p in ([path, "avx2/1"] if path == "avx2" else [path])]
    return with_strides + ["none"]


PATHS = cpu_paths()
SIMD_MOST_STATES = 256  # fsm/simd/plan.hpp kSimdLanes (past 64 states: AVX-512 VBMI vpermi2b)


def c_headers(size: int) -> bytes:
    parts, total = [], 0
    for path in sorted(Path("/usr/include").rglob("*.h")):
        parts.append(path.read_bytes())
        total += len(parts[-1])
        if total >= size:
            break
    text = b"".join(parts)
    return (text * (size // max(1, len(text)) + 1))[:size]


def three_groups(source: str) -> str:
    """The permutation machine with three reporting states of different tags."""
    name = source.split()[1]
    return (source.replace(f"machine {name} ", f"machine {name}g3 ")
            .replace("state p1 {", "state p1 report one {")
            .replace("state p2 {", "state p2 report two {"))


def random_source(states: int = 10, seed: int = 3) -> str:
    """A random machine: every state sends letters, digits, spaces and other bytes to
    random states (paths merge, as in most machines); two states report."""
    rng = random.Random(seed)
    lines = [f"machine random{states} {{", "    start r0"]
    for i in range(states):
        to = [f"r{rng.randrange(states)}" for _ in range(4)]
        report = " report hit" if i < 2 else ""
        lines.append(f"    state r{i}{report} {{ ['a'..'z', 'A'..'Z'] -> {to[0]}  "
                     f"'0'..'9' -> {to[1]}  ' ' -> {to[2]}  _ -> {to[3]} }}")
    return "\n".join(lines + ["}"]) + "\n"


def written(path: Path, size: int, make) -> Path:
    if not path.exists() or path.stat().st_size != size:
        path.write_bytes(make(size))
    return path


def cases(size: int, work: Path) -> list[tuple[str, object, Path]]:
    rng = random.Random(12)
    letters = written(work / "letters.txt", size, lambda n: bytes(
        rng.choice(b"abcdefXYZ0123456789 .,;\n") for _ in range(n)))
    headers = written(work / "c_headers.txt", size, c_headers)
    csv_text = written(work / "csv.txt", size, inputs.GENERATORS["csv"])
    weblog_text = written(work / "weblog.txt", size, inputs.GENERATORS["weblog"])

    def machine(name: str, text: str):
        return compile_file(SourceFile(name, text)).machines[0]

    def sample(name: str):
        text = (REPO / "samples" / f"{name}.fsm").read_text(encoding="latin-1")
        return machine(f"{name}.fsm", text)

    perm12 = permutation_source(12)
    return [("perm12", machine("perm12.fsm", perm12), letters),
            ("perm12_3groups", machine("perm12g3.fsm", three_groups(perm12)), letters),
            ("perm40", machine("perm40.fsm", permutation_source(40)), letters),
            ("perm40_3groups", machine("perm40g3.fsm", three_groups(permutation_source(40))),
             letters),
            ("perm100", machine("perm100.fsm", permutation_source(100)), letters),
            ("perm200", machine("perm200.fsm", permutation_source(200)), letters),
            ("random10", machine("random10.fsm", random_source()), letters),
            ("csv", sample("csv"), csv_text),
            ("clexer_headers", sample("clexer"), headers),
            ("weblog", sample("weblog"), weblog_text)]


def run(runner: Path, data: Path, scheme: str, threads: int, repeat: int, simd: str = "") -> dict:
    """The runner's JSON; `simd` forces a path (PATHS: `avx2/1` is avx2 one byte per step)."""
    path, _, stride = simd.partition("/")
    env = (dict(os.environ, PARAFUSE_FSM_SIMD=path, PARAFUSE_FSM_SIMD_STRIDE=stride) if simd
           else None)
    done = subprocess.run([str(runner), str(data), "--json", "--scheme", scheme, "--threads",
                           str(threads), "--repeat", str(repeat)], capture_output=True, text=True,
                          timeout=1800, env=env)
    return json.loads(done.stdout) if done.returncode == 0 else {"error": done.stderr.strip()}


# A fresh process's run varies up to 2x from one process to the next (page faults of the
# input, the CPU's frequency): 5 pairs left the ratio to chance, so at least 15.
FRESH_PAIRS = 15


def fresh_pairs(runner: Path, data: Path, best: str, threads: int, pairs: int) -> dict:
    """`pairs` fresh processes of `auto` alternating with fresh processes of `best`, one run
    each (auto pays its choosing every time; before: `auto` always first in a pair): the
    medians, the per-pair ratios' median and quartiles (how much the ratio moves from pair
    to pair), and auto's choices."""
    autos, bests, schemes = [], [], {}
    for pair in range(pairs):  # which runs first alternates (the second finds a warmer cache)
        if pair % 2:
            bests.append(gbps(run(runner, data, best, threads, 1)))
        result = run(runner, data, "auto", threads, 1)
        autos.append(gbps(result))
        schemes[result.get("scheme", "error")] = schemes.get(result.get("scheme", "error"), 0) + 1
        if pair % 2 == 0:
            bests.append(gbps(run(runner, data, best, threads, 1)))
    ratios = sorted(a / b for a, b in zip(autos, bests, strict=True) if b)
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    return {"auto": statistics.median(autos), "best": statistics.median(bests),
            "pair_median": statistics.median(ratios) if ratios else 0.0,
            "pair_quartiles": [quartiles[0], quartiles[2]], "auto_schemes": schemes}


CHOOSE_RUNS = 5


def choose_cost(driver: Path, blob: Path, data: Path, threads: int) -> dict:
    """What choosing costs a fresh process: `auto` profiled in CHOOSE_RUNS fresh driver
    processes, one run each; medians of the "choose..." phases and of the whole run (ms)."""
    chosen, total = [], []
    for _ in range(CHOOSE_RUNS):
        done = subprocess.run([str(driver), str(blob), str(data), "--profile",
                               f"auto:{threads}:{4 * threads}"],
                              capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            return {"error": done.stderr.strip()}
        phases = json.loads(done.stdout)["phases"]
        chosen.append(1e3 * sum(p["seconds"] for p in phases if p["name"].startswith("choose")))
        total.append(1e3 * sum(p["seconds"] for p in phases))
    return {"choose_ms": statistics.median(chosen), "run_ms": statistics.median(total)}


def mpi_rates(folder: Path, program: str, data: Path, repeat: int) -> dict:
    """GB/s under mpirun -n 1 and -n 2 (one thread per rank) for seq, enum and auto."""
    rates = {}
    for ranks in (1, 2):
        for scheme in ("seq", "enum", "auto"):
            done = run_ranks(folder, program, ranks, [str(data), "--json", "--scheme", scheme,
                                                      "--threads", "1", "--repeat", str(repeat)])
            rates[f"{scheme}/R{ranks}"] = json.loads(done.stdout).get("gbps") \
                if done.returncode == 0 else None
    return rates


def bench_case(label: str, machine, data: Path, args, driver: Path) -> dict:
    analysis = analyse_for_project(machine, data.read_bytes()[:1 << 20])
    folder = cached_project(ProjectRequest(machine, f"{label}.fsm", analysis), mpi=True)
    runner = folder / "build" / f"{machine.name}_run"
    row = {"label": label, "states": machine.state_count, "runs": {}, "simd": {},
           "projection": {}, "auto_fresh": {}}
    for scheme in SCHEMES:
        for threads in (1, 2):
            result = row["runs"][f"{scheme}/{threads}"] = run(runner, data, scheme, threads,
                                                              args.repeat)
            print(label, scheme, threads, result.get("gbps"), flush=True)
    row["best_fresh"], row["fresh_pairs"], row["choose"] = {}, {}, {}
    blob = args.work / f"{label}.blob"
    blob.write_bytes(machine_blob(machine, analysis))
    for threads in (1, 2):  # alternately, so that both meet the same load
        best = max(FIXED, key=lambda s: gbps(row["runs"][f"{s}/{threads}"]))
        fresh = fresh_pairs(runner, data, best, threads, max(args.repeat, FRESH_PAIRS))
        row["fresh_pairs"][str(threads)] = fresh
        row["auto_fresh"][str(threads)] = fresh["auto"]
        row["best_fresh"][str(threads)] = {"scheme": best, "gbps": fresh["best"]}
        row["choose"][str(threads)] = choose_cost(driver, blob, data, threads)
    if machine.state_count <= SIMD_MOST_STATES:
        for path in PATHS:
            if machine.state_count <= PATH_MOST_STATES[path]:
                row["simd"][path] = run(runner, data, "enum", 1, args.repeat, path)
    if label == "perm12":
        row["mpi"] = mpi_rates(folder, machine.name, data, args.repeat)
    row["seq_seconds"] = row["runs"]["seq/1"].get("seconds")
    for scheme in ("enum",) if args.quick else ("enum", "spec", "hspec", "fused"):
        for cores in (16, 64):
            measured = profile(driver, blob, data, scheme, cores)
            if "phases" in measured:
                row["projection"][f"{scheme}/{cores}"] = projected_seconds(measured["phases"],
                                                                           cores)
    return row


def gbps(result: dict) -> float:
    return result.get("gbps") or 0.0


def table(rows: list[dict]) -> str:
    lines = ["| case | states | " + " | ".join(f"{s} 1t / 2t" for s in SCHEMES) +
             " | auto / best fixed 1t | 2t | fresh auto / best 1t | 2t |"
             " fresh auto / fresh best 1t | 2t |",
             "|" + "---|" * (len(SCHEMES) + 8)]
    for row in rows:
        cells = [" / ".join(f"{gbps(row['runs'][f'{s}/{t}']):.2f}" for t in (1, 2))
                 for s in SCHEMES]
        ratios = []
        for key in ("runs", "auto_fresh"):
            for t in (1, 2):
                best = max(gbps(row["runs"][f"{s}/{t}"]) for s in FIXED) or 1.0
                auto = gbps(row["runs"][f"auto/{t}"]) if key == "runs" else row[key][str(t)]
                ratios.append(f"{auto / best:.2f}" + (
                    f" ({row['runs'][f'auto/{t}'].get('scheme')})" if key == "runs" else ""))
        for t in (1, 2):
            fresh = row.get("best_fresh", {}).get(str(t), {})
            ratios.append(f"{row['auto_fresh'][str(t)] / (fresh.get('gbps') or 1.0):.2f}"
                          f" ({fresh.get('scheme', '-')})")
        lines.append(f"| {row['label']} | {row['states']} | " + " | ".join(cells + ratios) + " |")
    lines += ["", f"Fresh processes, `auto` alternating with the best fixed scheme ({FRESH_PAIRS} "
              "pairs or more, one run each): the per-pair ratio auto / best, median [quartiles], "
              "and auto's choices; what choosing cost a fresh process (the table driver "
              f"profiled, medians of {CHOOSE_RUNS}): the `choose` phases / the whole run, ms:",
              "", "| case | fresh pairs 1t | 2t | auto's choices 1t | 2t | choosing 1t | 2t |",
              "|---|---|---|---|---|---|---|"]
    for row in rows:
        cells = []
        for t in ("1", "2"):
            pair = row.get("fresh_pairs", {}).get(t, {})
            low, high = pair.get("pair_quartiles", [0.0, 0.0])
            cells.append(f"{pair.get('pair_median', 0.0):.2f} [{low:.2f}-{high:.2f}]")
        cells += [", ".join(f"{k} {v}" for k, v in
                            row.get("fresh_pairs", {}).get(t, {}).get("auto_schemes", {}).items())
                  for t in ("1", "2")]
        for t in ("1", "2"):
            cost = row.get("choose", {}).get(t, {})
            cells.append(f"{cost['choose_ms']:.3f} / {cost['run_ms']:.1f}" if "run_ms" in cost
                         else "-")
        lines.append(f"| {row['label']} | " + " | ".join(cells) + " |")
    lines += ["", "`enum` at one thread under each SIMD path (GB/s; `avx2/1`: one byte per "
              "step where `avx2` takes two; `none`: the merging scalar "
              "enumeration; `-`: more states than the path takes):", "",
              "| case | " + " | ".join(PATHS) + " |",
              "|" + "---|" * (len(PATHS) + 1)]
    for row in rows:
        if row["simd"]:
            lines.append(f"| {row['label']} | " + " | ".join(
                f"{gbps(row['simd'][p]):.2f}" if p in row["simd"] else "-" for p in PATHS) + " |")
    for row in rows:
        if "mpi" in row:
            mpi = row["mpi"]
            lines += ["", f"`{row['label']}` under mpirun, one thread per rank (GB/s):", "",
                      "| scheme | R=1 | R=2 |", "|---|---|---|"]
            lines += [f"| {s} | {mpi[f'{s}/R1'] or 0:.2f} | {mpi[f'{s}/R2'] or 0:.2f} |"
                      for s in ("seq", "enum", "auto")]
    lines += ["", "Projected speedup over `seq` at one thread (16 / 64 cores):", "",
              "| case | enum | spec | hspec | fused |", "|---|---|---|---|---|"]
    for row in rows:
        seq = row["seq_seconds"] or 0
        cells = [" / ".join(f"{seq / row['projection'][f'{s}/{c}']:.1f}"
                            if f"{s}/{c}" in row["projection"] else "-" for c in (16, 64))
                 for s in ("enum", "spec", "hspec", "fused")]
        lines.append(f"| {row['label']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="16 MiB inputs, enum projections")
    parser.add_argument("--size", type=int, default=None, help="bytes per input (32 MiB)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--work", type=Path, default=REPO / "build" / "bench-fsm")
    args = parser.parse_args()
    size = args.size or ((16 if args.quick else 32) << 20)
    args.work.mkdir(parents=True, exist_ok=True)
    driver = table_driver()
    rows = [bench_case(*case, args, driver) for case in cases(size, args.work)]
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = "fsm_simd_quick" if args.quick else "fsm_simd"
    (RESULTS / f"{stem}.json").write_text(json.dumps(rows, indent=1) + "\n")
    text = (f"# boostfsm: SIMD enumeration, measured auto, MPI ranks\n\n{machine_description()}. "
            f"Inputs of {size >> 20} MiB, medians of {args.repeat} runs.\n\n" + table(rows))
    (RESULTS / f"{stem}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
