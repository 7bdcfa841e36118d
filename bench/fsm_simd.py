"""boostfsm SIMD enumeration and measured `auto`: every scheme side by side at 1 and 2
threads, `enum` under each SIMD path this CPU runs and the merging scalar enumeration,
`auto`'s ratio to the best fixed scheme, and projected 16/64-core speedups over `seq`.

    .venv/bin/python bench/fsm_simd.py [--size BYTES] [--repeat K]   (make bench-fsm)

Cases: the 12-state permutation machine (letters rotate the state, digits swap two
states: paths never merge) over random letters, digits and punctuation; the clexer
sample (a mode tracker for C comments and strings) over real C headers (/usr/include,
read at bench time); the 40-state permutation machine (AVX-512 VBMI's range).
Writes bench/results/fsm_simd.md and fsm_simd.json. GB/s are the runner's medians of
--repeat runs (wall time, input mapping excluded); projections as bench/fsm_schemes.py.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "bench"), str(REPO / "samples")]

from fsm_schemes import (  # noqa: E402
    SCHEMES,
    machine_description,
    profile,
    projected_seconds,
)
from permutation import permutation_source  # noqa: E402

from parafuse.emitters.fsm.blob import machine_blob  # noqa: E402
from parafuse.emitters.fsm.project import ProjectRequest, cached_project, table_driver  # noqa: E402
from parafuse.fsm_compiler.pipeline import analyse_for_project, compile_file  # noqa: E402
from parafuse.grammar.diagnostics import SourceFile  # noqa: E402

RESULTS = REPO / "bench" / "results"
PATH_FLAGS = {"scalar": set(), "ssse3": {"ssse3"}, "avx2": {"avx2"},
              "avx512vbmi": {"avx512f", "avx512bw", "avx512vbmi"}}


def cpu_paths() -> list[str]:
    """The SIMD paths this CPU runs, then `none` (the merging scalar enumeration)."""
    flags = set()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    return [path for path, needs in PATH_FLAGS.items() if needs <= flags] + ["none"]


PATHS = cpu_paths()


def c_headers(size: int) -> bytes:
    parts, total = [], 0
    for path in sorted(Path("/usr/include").rglob("*.h")):
        parts.append(path.read_bytes())
        total += len(parts[-1])
        if total >= size:
            break
    text = b"".join(parts)
    return (text * (size // max(1, len(text)) + 1))[:size]


def cases(size: int, work: Path) -> list[tuple[str, object, Path]]:
    rng = random.Random(12)
    letters = work / "perm12.txt"
    if not letters.exists() or letters.stat().st_size != size:
        letters.write_bytes(bytes(rng.choice(b"abcdefXYZ0123456789 .,;\n") for _ in range(size)))
    headers = work / "c_headers.txt"
    if not headers.exists() or headers.stat().st_size != size:
        headers.write_bytes(c_headers(size))
    perm12 = compile_file(SourceFile("perm12.fsm", permutation_source(12))).machines[0]
    clexer_text = (REPO / "samples" / "clexer.fsm").read_text(encoding="latin-1")
    clexer = compile_file(SourceFile("clexer.fsm", clexer_text)).machines[0]
    perm40 = compile_file(SourceFile("perm40.fsm", permutation_source(40))).machines[0]
    return [("perm12", perm12, letters), ("clexer_headers", clexer, headers),
            ("perm40", perm40, letters)]


def run(runner: Path, data: Path, scheme: str, threads: int, repeat: int, simd: str = "") -> dict:
    env = dict(os.environ, PARAFUSE_FSM_SIMD=simd) if simd else None
    done = subprocess.run([str(runner), str(data), "--json", "--scheme", scheme, "--threads",
                           str(threads), "--repeat", str(repeat)], capture_output=True, text=True,
                          timeout=1800, env=env)
    return json.loads(done.stdout) if done.returncode == 0 else {"error": done.stderr.strip()}


def bench_case(label: str, machine, data: Path, repeat: int, work: Path, driver: Path) -> dict:
    analysis = analyse_for_project(machine, data.read_bytes()[:1 << 20])
    runner = cached_project(ProjectRequest(machine, f"{label}.fsm", analysis)) / "build" / \
        f"{machine.name}_run"
    row = {"label": label, "states": machine.state_count, "runs": {}, "simd": {}, "projection": {}}
    for scheme in SCHEMES:
        for threads in (1, 2):
            result = row["runs"][f"{scheme}/{threads}"] = run(runner, data, scheme, threads,
                                                              repeat)
            print(label, scheme, threads, result.get("gbps"), flush=True)
    for path in PATHS:
        row["simd"][path] = run(runner, data, "enum", 1, repeat, path)
        print(label, "enum", path, row["simd"][path].get("gbps"), flush=True)
    blob = work / f"{label}.blob"
    blob.write_bytes(machine_blob(machine, analysis))
    row["seq_seconds"] = row["runs"]["seq/1"].get("seconds")
    for scheme in ("enum", "spec", "hspec", "fused"):
        for cores in (16, 64):
            measured = profile(driver, blob, data, scheme, cores)
            if "phases" in measured:
                seconds = projected_seconds(measured["phases"], cores)
                row["projection"][f"{scheme}/{cores}"] = seconds
    return row


def table(rows: list[dict]) -> str:
    lines = ["| case | states | " + " | ".join(f"{s} 1t / 2t" for s in SCHEMES) +
             " | auto / best fixed (2t) |", "|" + "---|" * (len(SCHEMES) + 3)]
    for row in rows:
        cells = []
        for scheme in SCHEMES:
            pair = [row["runs"][f"{scheme}/{t}"].get("gbps") for t in (1, 2)]
            cells.append(" / ".join(f"{g:.2f}" if g else "err" for g in pair))
        fixed = [row["runs"][f"{s}/2"].get("gbps") or 0 for s in SCHEMES if s != "auto"]
        ratio = (row["runs"]["auto/2"].get("gbps") or 0) / max(fixed)
        picked = row["runs"]["auto/2"].get("scheme")
        lines.append(f"| {row['label']} | {row['states']} | " + " | ".join(cells) +
                     f" | {ratio:.2f} ({picked}) |")
    lines += ["", "`enum` at one thread under each SIMD path (GB/s):", "",
              "| case | " + " | ".join(PATHS) + " |", "|" + "---|" * (len(PATHS) + 1)]
    for row in rows:
        lines.append(f"| {row['label']} | " + " | ".join(
            f"{row['simd'][p].get('gbps', 0):.2f}" for p in PATHS) + " |")
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
    parser.add_argument("--size", type=int, default=32 << 20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", type=Path, default=REPO / "build" / "bench-fsm")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    driver = table_driver()
    rows = [bench_case(*case, args.repeat, args.work, driver)
            for case in cases(args.size, args.work)]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "fsm_simd.json").write_text(json.dumps(rows, indent=1) + "\n")
    text = (f"# boostfsm: SIMD enumeration and measured auto\n\n{machine_description()}. "
            f"Inputs of {args.size >> 20} MiB, medians of {args.repeat} runs.\n\n" + table(rows))
    (RESULTS / "fsm_simd.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
