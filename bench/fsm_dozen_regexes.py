"""Compile a dozen realistic regexes (rebar's leipzig/sherlock set, those the .fsm
language accepts) into one minimal DFA, time each stage, analyse it on sherlock.txt,
and check its matches against Hyperscan.

    .venv/bin/python bench/fsm_dozen_regexes.py [--record]

With --record the report is written to bench/results/fsm_dozen_regexes.txt.
"""

from __future__ import annotations

import csv
import os
import platform
import sys
import time
from pathlib import Path

from parafuse.fsm_compiler.options import machine_options
from parafuse.fsm_compiler.pipeline import analyse, determinise, minimise_dfa, parse_file
from parafuse.fsm_compiler.reference_executor import run_reference
from parafuse.grammar.diagnostics import SourceFile

# The rebar corpus beside the repository (<repo>/../shared/data/rebar), or $REBAR_DATA.
REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("REBAR_DATA", REPO.parent / "shared" / "data" / "rebar"))
CHOSEN = [
    "leipzig/twain", "leipzig/shing", "leipzig/huck-saw",
    "leipzig/tom-sawyer-huckle-fin-insensitive", "leipzig/ing", "leipzig/awyer-inn",
    "leipzig/quotes-bounded", "sherlock/name-sherlock-holmes", "sherlock/name-whitespace",
    "sherlock/name-alt3-casei", "sherlock/before-after-holmes", "sherlock/the-casei",
]


def chosen_patterns() -> list[tuple[str, str, str]]:
    with open(DATA / "regexes.tsv", newline="") as handle:
        rows = {row["name"]: row for row in csv.DictReader(handle, delimiter="\t")}
    return [(name.split("/")[1].replace("-", "_"), rows[name]["regex"],
             "" if rows[name]["flags"] == "-" else rows[name]["flags"]) for name in CHOSEN]


def source_text(patterns: list[tuple[str, str, str]]) -> str:
    lines = [f"    {tag} /{regex.replace('/', chr(92) + '/')}/{flags}"
             for tag, regex, flags in patterns]
    return "patterns rebar_dozen {\n" + "\n".join(lines) + "\n}\n"


def timed(label: str, report: list[str], function, *args):
    began = time.perf_counter()
    value = function(*args)
    report.append(f"{label:28} {time.perf_counter() - began:8.3f} s")
    return value


def hyperscan_agrees(patterns, data: bytes, matches) -> str:
    try:
        import hyperscan
    except ImportError:
        return "hyperscan not installed"
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(expressions=[regex.encode() for _, regex, _ in patterns],
                     ids=list(range(len(patterns))), elements=len(patterns),
                     flags=[hyperscan.HS_FLAG_CASELESS if "i" in f else 0 for *_, f in patterns])
    found: set = set()
    database.scan(data, match_event_handler=lambda i, s, e, f, c: found.add((e, i)))
    return "identical" if sorted(found) == matches else "DIFFERENT"


def main() -> None:
    patterns = chosen_patterns()
    report = [f"machine: {platform.node()} {platform.processor() or platform.machine()}, "
              f"Python {platform.python_version()}", "", source_text(patterns)]
    began = time.perf_counter()
    fsm_file = timed("parse", report, parse_file, SourceFile("dozen.fsm", source_text(patterns)))
    pattern_set = fsm_file.machines[0]
    options = machine_options(fsm_file)[pattern_set.name.name]
    dfa = timed("NFA + subset construction", report, determinise, pattern_set, options)
    machine = timed("minimise + BFS + classes", report, minimise_dfa, pattern_set, dfa, options)
    report.append(f"{'total compile':28} {time.perf_counter() - began:8.3f} s")
    report.append(f"subset DFA states {dfa.state_count}, minimal {machine.state_count}, "
                  f"byte classes {machine.class_count}, table bytes {machine.table_bytes()}")
    sherlock = (DATA / "sherlock.txt").read_bytes()
    analysis = timed("analysis (sherlock.txt)", report, analyse, machine, sherlock, "sherlock")
    report.append(f"fused states {analysis.fused.count} (bound {analysis.fused.bound}, "
                  f"exceeded {analysis.fused.exceeded}, "
                  f"bound set by {analysis.fused.bound_reason})")
    for item in analysis.convergence:
        report.append(f"converge <={item.threshold}: median {item.median}, p90 {item.p90}, "
                      f"never {item.never}/{item.positions}")
    report.append(f"lookback {options.lookback}: accuracy {analysis.lookback_accuracy}")
    result = timed("reference run (sherlock.txt)", report, run_reference, machine, sherlock, True)
    report.append(f"matches {len(result.matches)}; Hyperscan: "
                  f"{hyperscan_agrees(patterns, sherlock, result.matches)}")
    text = "\n".join(report) + "\n"
    print(text, end="")
    if "--record" in sys.argv:
        out = Path(__file__).parent / "results" / "fsm_dozen_regexes.txt"
        out.parent.mkdir(exist_ok=True)
        out.write_text(text)


if __name__ == "__main__":
    main()
