"""Compile time and table memory of the Nosey Parker rule set (189 rules as one .fsm):
`boostfsm check`, and `boostfsm compile` from the .fsm to a built runner (fresh cache,
so analysis, tables and the C++ build all run), each --repeat times; then `check` and
`analyze` of one long literal (2,000 and 5,000 random bytes), whose minimisation was
quadratic in its length.

    .venv/bin/python bench/fsm_compile_time.py [--repeat 3] [--record]

Reports medians of wall time and CPU time (this process's children: Python and the
C++ compiler), the engines' table bytes as `boostfsm analyze` counts them, and the
bytes of the blob the runner embeds (transition rows padded to a power of two, entries
holding byte offsets, fused tables, report lists, NFA tables). Run it once from each of
two checkouts to compare them. Targets (issue 13): check under 10 s, .fsm to runner
under 60 s, tables under 64 MiB.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fsm_ruleset_sources as sources  # noqa: E402
from fsm_schemes import machine_description  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results" / "fsm_compile_time.txt"
BOOSTFSM = [sys.executable, "-m", "parafuse.cli.boostfsm"]


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def medians(samples: list[tuple[float, float]]) -> str:
    walls, cpus = zip(*samples, strict=True)
    return (f"median wall {statistics.median(walls):6.1f} s, CPU {statistics.median(cpus):6.1f} s"
            f"  (walls {', '.join(f'{w:.1f}' for w in walls)})")


def _table_bytes(analysis) -> int:
    """The total `table_bytes` of `boostfsm analyze --json` (a list, one entry a machine)."""
    return int(analysis[0]["table_bytes"])


LITERAL_LENGTHS = (2000, 5000)


def literal_source(length: int) -> str:
    """A pattern set of one literal of `length` seeded random letters and digits."""
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    state, letters = 12345, []
    for _ in range(length):
        state = (state * 1103515245 + 12345) % (1 << 31)
        letters.append(alphabet[state % len(alphabet)])
    return f"patterns literal {{\n    long /{''.join(letters)}/\n}}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        source = work / "noseyparker.fsm"
        source.write_text(sources.fsm_source("noseyparker",
                                             sources.parsable(sources.noseyparker_rules())),
                          encoding="latin-1")
        env = dict(os.environ)
        checks = [timed([*BOOSTFSM, "check", str(source)], env) for _ in range(args.repeat)]
        builds = []
        for attempt in range(args.repeat):
            env["PARAFUSE_CACHE"] = str(work / f"cache{attempt}")
            builds.append(timed([*BOOSTFSM, "compile", str(source), "-o",
                                 str(work / f"project{attempt}")], env))
        blob_bytes = (work / "project0" / "src" / "noseyparker.tables.bin").stat().st_size
        analysis = json.loads(subprocess.run([*BOOSTFSM, "analyze", "--json", str(source)],
                                             check=True, env=env, capture_output=True,
                                             text=True).stdout)
        literals = []
        for length in LITERAL_LENGTHS:
            literal = work / f"literal{length}.fsm"
            literal.write_text(literal_source(length))
            literals.append((length, [timed([*BOOSTFSM, "check", str(literal)], env)
                                      for _ in range(args.repeat)],
                             [timed([*BOOSTFSM, "analyze", str(literal)], env)
                              for _ in range(args.repeat)]))
    table_bytes = _table_bytes(analysis)
    report = [f"machine: {machine_description()}",
              "(a shared, noisy machine unless said otherwise: compare medians)", "",
              f"Nosey Parker, 189 rules, {args.repeat} runs each",
              f"  boostfsm check:              {medians(checks)}",
              f"  .fsm to built runner:        {medians(builds)}",
              f"  table bytes (analyze):       {table_bytes} ({table_bytes / (1 << 20):.1f} MiB)",
              f"  blob the runner embeds:      {blob_bytes} bytes "
              f"({blob_bytes / (1 << 20):.1f} MiB)"]
    for length, checks_of, analyses in literals:
        report += [f"one literal of {length} bytes",
                   f"  boostfsm check:              {medians(checks_of)}",
                   f"  boostfsm analyze:            {medians(analyses)}"]
    text = "\n".join(report) + "\n"
    print(text)
    if args.record:
        RESULTS.write_text(text)


if __name__ == "__main__":
    main()
