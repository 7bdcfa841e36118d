"""What `auto`'s choosing costs a fresh process, phase by phase, on chosen cases of
bench/fsm_simd.py (same machines and inputs): the table driver runs `auto` profiled in
fresh processes, one run each, and the medians of each `choose...` phase, of their sum and
of the whole run are printed (ms), with the schemes auto chose.

    .venv/bin/python bench/fsm_choose_cost.py [--cases perm12,random10,...] [--runs K]
        [--threads 1,2] [--size BYTES] [--driver PATH]

Prints a markdown table; writes nothing. The machine may be shared and loaded: the
whole run's time moves with the load more than choosing's does.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "bench")]

from fsm_simd import cases  # noqa: E402

from parafuse.emitters.fsm.blob import machine_blob  # noqa: E402
from parafuse.emitters.fsm.project import table_driver  # noqa: E402
from parafuse.fsm_compiler.pipeline import analyse_for_project  # noqa: E402

DEFAULT_CASES = "perm12,random10,csv,clexer_headers,weblog,perm100"


def profiled_runs(driver: Path, blob: Path, data: Path, threads: int, runs: int) -> list[dict]:
    """`runs` fresh driver processes of `auto` at `threads` threads, profiled."""
    results = []
    for _ in range(runs):
        done = subprocess.run([str(driver), str(blob), str(data), "--profile",
                               f"auto:{threads}:{4 * threads}"],
                              capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            raise SystemExit(f"{blob.name}: {done.stderr.strip()}")
        results.append(json.loads(done.stdout))
    return results


def summary(results: list[dict]) -> dict:
    """Medians (ms) of each choose phase, of their sum and of the whole run; the schemes."""
    names = sorted({p["name"] for r in results for p in r["phases"]
                    if p["name"].startswith("choose")})
    per_phase = {name: statistics.median(
        1e3 * sum(p["seconds"] for p in r["phases"] if p["name"] == name) for r in results)
        for name in names}
    chosen = [1e3 * sum(p["seconds"] for p in r["phases"] if p["name"].startswith("choose"))
              for r in results]
    total = [1e3 * sum(p["seconds"] for p in r["phases"]) for r in results]
    schemes: dict[str, int] = {}
    for r in results:
        schemes[r["scheme"]] = schemes.get(r["scheme"], 0) + 1
    return {"phases": per_phase, "choose_ms": statistics.median(chosen),
            "run_ms": statistics.median(total), "schemes": schemes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=DEFAULT_CASES)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--size", type=int, default=16 << 20)
    parser.add_argument("--work", type=Path, default=REPO / "build" / "bench-fsm")
    parser.add_argument("--driver", type=Path, default=None,
                        help="a table driver built elsewhere (default: this tree's, built)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    wanted = args.cases.split(",")
    driver = args.driver or table_driver()
    print("| case | threads | choose ms | run ms | share | schemes | phases (ms) |")
    print("|---|---|---|---|---|---|---|")
    for label, machine, data in cases(args.size, args.work):
        if label not in wanted:
            continue
        blob = args.work / f"{label}.blob"
        blob.write_bytes(machine_blob(machine, analyse_for_project(
            machine, data.read_bytes()[:1 << 20])))
        for threads in (int(t) for t in args.threads.split(",")):
            s = summary(profiled_runs(driver, blob, data, threads, args.runs))
            phases = ", ".join(f"{k.removeprefix('choose: ')} {v:.3f}"
                               for k, v in s["phases"].items())
            schemes = ", ".join(f"{k} {v}" for k, v in s["schemes"].items())
            print(f"| {label} | {threads} | {s['choose_ms']:.3f} | {s['run_ms']:.1f} | "
                  f"{100 * s['choose_ms'] / s['run_ms']:.1f}% | {schemes} | {phases} |",
                  flush=True)


if __name__ == "__main__":
    main()
