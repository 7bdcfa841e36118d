"""Real rule sets side by side with Hyperscan: rebar's regexes over 32 MiB of Sherlock
and subtitles, Nosey Parker's rules over 32 MiB of Python standard-library source with
the rules' examples planted in it, over the same source alone (the text a scanner
mostly sees: few matches) and over web server logs (samples/inputs.py: no match at
all), and uap-core's user-agent regexes (about 1,160) over 32 MiB of its test user
agents, one a line (a log of user agents).

    .venv/bin/python bench/fsm_rulesets.py [--mib 32] [--repeat 3] [--record] [--quick]

For each set: compile time (parse + engines; project build), engines and table bytes;
then match counts and GB/s of Hyperscan's C API at one thread (built against
libhyperscan-dev; skipped without it), of the generated runner under `seq`, and
under `auto` at 1 and 2 threads, in --repeat rounds that run each once
(interleaved_rounds), each one's ratio to Hyperscan taken within a round; then the
projected speedup of `auto` over `seq` on 16 and 64 cores: the engine-set driver's phase
timings (--profile, 4 chunks a core on one thread, medians of PROFILE_RUNS) spread over
that many cores as bench/fsm_schemes.py does. Rules the parser does not take yet are
left out and counted. --quick: 4 MiB inputs and 3 rounds (a few minutes with the
projects cached). With --record the report
goes to bench/results/fsm_rulesets.txt.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fsm_ruleset_sources as sources  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples"))
import inputs as sample_inputs  # noqa: E402
from fsm_schemes import PROFILE_RUNS, machine_description, projected_seconds  # noqa: E402

from parafuse.emitters.fsm.engine_set_blob import engine_set_blob  # noqa: E402
from parafuse.emitters.fsm.project import (  # noqa: E402
    ProjectRequest,
    cached_project,
    engine_set_driver,
)
from parafuse.emitters.toolchain.cmake import cache_root  # noqa: E402
from parafuse.fsm_compiler.engines.engines import EngineSet, engine_kind  # noqa: E402
from parafuse.fsm_compiler.pipeline import (  # noqa: E402
    analyse_for_project,
    compile_file,
)
from parafuse.grammar.diagnostics import SourceFile  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results" / "fsm_rulesets.txt"


def repeated(parts: list[bytes], size: int) -> bytes:
    text = b"".join(parts)
    return (text * (size // len(text) + 1))[:size]


def rebar_input(size: int) -> bytes:
    folder = sources.DATA / "rebar"
    return repeated([(folder / "sherlock.txt").read_bytes(),
                     (folder / "opensubtitles-en-sampled.txt").read_bytes()], size)


def uap_input(size: int) -> bytes:
    return repeated([b"\n".join(sources.uap_agents()) + b"\n"], size)


def stdlib_input(size: int, rules: list, planted: bool = True) -> bytes:
    """Standard-library .py files (sorted paths) with every rule's examples planted after
    every 64 KiB of source (`planted`), else the source alone."""
    examples = b"\n".join(example.encode() for rule in rules for example in rule.examples) \
        if planted else b""
    pieces, total = [], 0
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        text = path.read_bytes()
        for begin in range(0, len(text), 1 << 16):
            pieces += [text[begin:begin + (1 << 16)], b"\n", examples, b"\n"]
            total += min(len(text) - begin, 1 << 16) + len(examples) + 2
        if total >= size:
            break
    return b"".join(pieces)[:size]


def weblog_input(size: int) -> bytes:
    """Web server access logs (the weblog sample's generator): log-like text without
    secrets, where digits and dates are everywhere."""
    return sample_inputs.weblog(size)[:size]


def hyperscan_counter() -> Path | None:
    if not Path("/usr/include/hs/hs.h").exists():
        return None
    source = REPO / "bench" / "fsm_hyperscan_count.c"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
    binary = cache_root() / f"fsm_hyperscan_count-{digest}"
    if not binary.exists():
        subprocess.run(["gcc", "-O2", str(source), "-o", str(binary), "-lhs"], check=True)
    return binary


def hyperscan_run(rules: list, data: Path, repeat: int, work: Path) -> dict:
    binary = hyperscan_counter()
    if binary is None:
        return {"error": "libhyperscan-dev is not installed"}
    listing = work / f"{data.stem}.patterns"
    listing.write_bytes(b"".join(f"{rule.flags or '-'}\t{rule.regex}".encode() + b"\x1e"
                                 for rule in rules))
    done = subprocess.run([str(binary), str(listing), str(data), str(repeat)],
                          capture_output=True, text=True, timeout=900)
    return json.loads(done.stdout) if done.returncode == 0 else {"error": done.stderr}


def interleaved_rounds(rules: list, runner: Path, data: Path, rounds: int,
                       work: Path) -> list[tuple[str, dict]]:
    """Hyperscan, then the runner under seq and auto at 1 and 2 threads, once a round (3
    runs a process, their median): on a shared machine whose speed drifts by 1.5x from one
    minute to the next, each ratio is taken within a round, the median of the rounds'
    ratios reported. Each result's `seconds` is the median of its rounds, `rounds` all."""
    names = ["hyperscan C API, 1 thread"] + [f"boostfsm {scheme}, {threads} thread(s)"
                                             for scheme, threads in CONFIGS]
    runs: list[list[dict]] = [[] for _ in names]
    for _ in range(rounds):
        runs[0].append(hyperscan_run(rules, data, 3, work))
        for index, (scheme, threads) in enumerate(CONFIGS, start=1):
            runs[index].append(runner_run(runner, data, scheme, threads, 3))
    rows = []
    for name, results in zip(names, runs, strict=True):
        failed = [result for result in results if "error" in result]
        if failed:
            rows.append((name, failed[0]))
            continue
        seconds = [result["seconds"] for result in results]
        middle = statistics.median(seconds)
        rows.append((name, {**results[0], "seconds": middle, "rounds": seconds,
                            "gbps": data.stat().st_size / middle / 1e9}))
    return rows


CONFIGS = (("seq", 1), ("auto", 1), ("auto", 2))


def round_ratio(base: dict, result: dict) -> float:
    """The median over rounds of base's time / result's time in the same round."""
    return statistics.median(b / r for b, r in zip(base["rounds"], result["rounds"], strict=True))


def runner_run(runner: Path, data: Path, scheme: str, threads: int, repeat: int) -> dict:
    done = subprocess.run([str(runner), str(data), "--json", "--scheme", scheme, "--threads",
                           str(threads), "--repeat", str(repeat)],
                          capture_output=True, text=True, timeout=1800)
    return json.loads(done.stdout) if done.returncode == 0 else {"error": done.stderr.strip()}


def profiled_phases(machine, analysis, data: Path, cores: int, work: Path) -> list[dict] | None:
    """The set's phases under `auto` with 4 chunks a core on one thread (medians)."""
    if not isinstance(machine, EngineSet):
        return None
    blob = work / f"{machine.name}.blob"
    blob.write_bytes(engine_set_blob(machine, analysis))
    config = f"auto:1:{4 * cores}"
    done = subprocess.run([str(engine_set_driver()), str(blob), str(len(machine.tag_names)),
                           str(data), "--profile", *[config] * (1 + PROFILE_RUNS)],
                          capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        return None
    runs = [json.loads(line)["phases"] for line in done.stdout.splitlines()][1:]
    shape = [(phase["name"], len(phase["units"])) for phase in runs[0]]
    runs = [run for run in runs if [(p["name"], len(p["units"])) for p in run] == shape]
    return [{"name": phase["name"], "parallel": phase["parallel"],
             "seconds": statistics.median(run[index]["seconds"] for run in runs),
             "units": [statistics.median(units)
                       for units in zip(*(run[index]["units"] for run in runs))]}
            for index, phase in enumerate(runs[0])]


def engines_lines(machine) -> list[str]:
    if not isinstance(machine, EngineSet):
        return [f"  one DFA: {machine.state_count} states, {machine.class_count} classes, "
                f"{machine.table_bytes()} table bytes"]
    lines = []
    for number, engine in enumerate(machine.engines):
        if engine_kind(engine) == "dfa":
            size = (f"{engine.machine.state_count} states, {engine.machine.class_count} classes, "
                    f"{engine.machine.table_bytes()} table bytes")
        elif engine_kind(engine) == "prefilter":
            size = (f"{engine.factor_count} literals, literal DFA {engine.literals.state_count} "
                    f"states, {engine.table_bytes()} table bytes")
        else:
            size = (f"{engine.position_count} positions, max match {engine.max_length}, "
                    f"{engine.table_bytes()} table bytes")
        lines.append(f"  engine {number}: {engine_kind(engine)}, {len(engine.patterns)} "
                     f"patterns, {size}")
    return lines


def table_bytes(machine) -> int:
    if not isinstance(machine, EngineSet):
        return machine.table_bytes()
    return sum(engine.machine.table_bytes() if engine_kind(engine) == "dfa"
               else engine.table_bytes() for engine in machine.engines)


def bench_set(label: str, rules: list, all_count: int, data: bytes, repeat: int,
              work: Path, title: str = "") -> list[str]:
    report = [f"## {title or label}: {len(rules)} of {all_count} rules parse (only those run)"]
    source = sources.fsm_source(label, rules)
    began = time.perf_counter()
    machine = compile_file(SourceFile(f"{label}.fsm", source)).machines[0]
    compiled = time.perf_counter() - began
    report.append(f"compile (parse + engines): {compiled:.2f} s; table bytes "
                  f"{table_bytes(machine)}")
    report += engines_lines(machine)
    data_path = work / f"{label}.input"
    data_path.write_bytes(data)
    train = data[:1 << 20]
    began = time.perf_counter()
    analysis = analyse_for_project(machine, train)
    project = cached_project(ProjectRequest(machine, f"{label}.fsm", analysis))
    report.append(f"analysis + project build (or cache): {time.perf_counter() - began:.1f} s")
    runner = project / "build" / f"{label}_run"
    rows = interleaved_rounds(rules, runner, data_path, repeat, work)
    report.append(f"input: {len(data) / (1 << 20):.1f} MiB; medians of {repeat} rounds, each "
                  f"running Hyperscan and every configuration once (3 runs in one process)")
    hyperscan = rows[0][1]
    for name, result in rows:
        if "error" in result:
            report.append(f"  {name:32} error: {result['error'][:300]}")
            continue
        matches = result.get("matches") if "counts" not in result else sum(
            result["counts"].values())
        extra = f"  [{result['scheme']}]" if "scheme" in result else ""
        ratio = ("" if "error" in hyperscan
                 else f"  x{round_ratio(hyperscan, result):5.2f} of Hyperscan")
        report.append(f"  {name:32} {result['gbps']:7.3f} GB/s  {result['seconds']:8.3f} s"
                      f"{ratio}  matches {matches}{extra}")
    seq = rows[1][1].get("seconds")
    for cores in (16, 64):
        phases = profiled_phases(machine, analysis, data_path, cores, work)
        if phases is None or not seq:
            report.append(f"  projected auto on {cores} cores: not measured")
            continue
        projected = projected_seconds(phases, cores)
        serial = sum(phase["seconds"] for phase in phases if not phase["parallel"])
        report.append(f"  projected auto on {cores} cores: {projected:.4f} s, "
                      f"x{seq / projected:.1f} over seq at 1 thread "
                      f"({serial:.4f} s of it sequential phases)")
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--only", choices=["rebar", "noseyparker", "noseyparker-source",
                                           "noseyparker-logs", "uap"])
    parser.add_argument("--quick", action="store_true", help="4 MiB inputs, 3 runs")
    args = parser.parse_args()
    if args.quick:
        args.mib, args.repeat = 4, 3
    work = cache_root() / "bench-fsm-rulesets"
    work.mkdir(parents=True, exist_ok=True)
    size = args.mib << 20
    report = [f"machine: {machine_description()}", "(a shared, noisy machine: see docs/fsm.md)",
              ""]
    if args.only in (None, "rebar"):
        rebar = sources.rebar_rules()
        report += bench_set("rebar", sources.parsable(rebar), len(rebar), rebar_input(size),
                            args.repeat, work) + [""]
    nosey_inputs = {  # --only: (input, title)
        "noseyparker": (lambda rules: stdlib_input(size, rules), ""),
        "noseyparker-source": (lambda rules: stdlib_input(size, rules, planted=False),
                               "noseyparker over the source alone"),
        "noseyparker-logs": (lambda _: weblog_input(size), "noseyparker over web server logs"),
    }
    if args.only is None or args.only in nosey_inputs:
        nosey = sources.noseyparker_rules()
        kept = sources.parsable(nosey)
        for name, (make_input, title) in nosey_inputs.items():
            if args.only in (None, name):
                report += bench_set("noseyparker", kept, len(nosey), make_input(kept),
                                    args.repeat, work, title) + [""]
    if args.only in (None, "uap"):
        uap = sources.uap_rules()
        both = sources.hyperscan_accepted(sources.parsable(uap))
        report += bench_set("uap", both, len(uap), uap_input(size), args.repeat, work,
                            "uap-core (the rules both boostfsm and Hyperscan take)")
    text = "\n".join(report) + "\n"
    print(text)
    if args.record:
        RESULTS.write_text(text)


if __name__ == "__main__":
    main()
