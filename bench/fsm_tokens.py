"""boostfsm token sets against flex and re2c: each sample lexer (samples/tokens) over a
32 MiB input, tokenizing from memory and building the token list, side by side in one
run: flex (`flex -8 -Cf`), re2c, and boostfsm's `seq` and `auto` at 1 and 2 threads.
Every token list is checked identical to flex's.

    .venv/bin/python bench/fsm_tokens.py [--size BYTES] [--rounds R] [--repeat K]
    .venv/bin/python bench/fsm_tokens.py --quick      (under 3 minutes: 3 rounds of 3)
    (make bench-fsm-tokens)

Inputs: C is the headers under /usr/include concatenated (repeated up to the size);
JSON and logs come from samples/tokens/token_inputs.py. The flex and re2c lexers are
generated from the same parsed rules (bench/fsm_tokens_lexgen.py) and compiled with
`c++ -O2`. Each of R rounds runs every contender once, in turn, timing K runs of it
in-process and keeping their median; a contender's time is the median over the rounds,
and its ratio to flex the median over the rounds of flex's time / its time in the same
round (so a load that comes and goes on a shared machine hits both sides of a ratio).
GB/s = input bytes / seconds. Writes bench/results/fsm_tokens.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "samples" / "tokens"), str(REPO / "bench")]

import token_inputs  # noqa: E402
from fsm_tokens_lexgen import flex_source, re2c_source  # noqa: E402

from parafuse.emitters.fsm.token_project import cached_token_project, token_hints  # noqa: E402
from parafuse.fsm_compiler.pipeline import compile_machines, parse_file  # noqa: E402
from parafuse.grammar.diagnostics import SourceFile  # noqa: E402

HERE = REPO / "bench" / "fsm_tokens"
RESULTS = REPO / "bench" / "results"
RUNS = [("seq", 1), ("auto", 1), ("auto", 2)]
TOKEN_DTYPE = np.dtype({"names": ["start", "end", "kind"], "formats": ["<u8", "<u8", "<u2"],
                        "offsets": [0, 8, 16], "itemsize": 24})


def c_input(size: int) -> bytes:
    parts, total = [], 0
    headers = sorted(Path("/usr/include").rglob("*.h"))
    while total < size and headers:
        for header in headers:
            text = header.read_bytes().replace(b"\0", b"")
            parts.append(text)
            total += len(text)
            if total >= size:
                break
    return b"".join(parts)[:size]


def sample_input(name: str, size: int) -> bytes:
    return c_input(size) if name == "clexer_tokens" else token_inputs.GENERATORS[name](size)


def build_lexers(token_set_ast, work: Path) -> dict[str, Path]:
    common = ["c++", "-O2", "-std=c++17", f"-I{HERE}", str(HERE / "bench_main.cpp")]
    (work / "lexer.l").write_text(flex_source(token_set_ast))
    subprocess.run(["flex", "-8", "-Cf", "-o", str(work / "lex.yy.cc"), str(work / "lexer.l")],
                   check=True)
    subprocess.run([*common, "-DPF_FLEX", "-x", "c++", str(work / "lex.yy.cc"), "-o",
                    str(work / "bench_flex")], check=True)
    (work / "lexer.re").write_text(re2c_source(token_set_ast))
    subprocess.run(["re2c", "-o", str(work / "re2c_lexer.cpp"), str(work / "lexer.re")],
                   check=True)
    subprocess.run([*common, str(work / "re2c_lexer.cpp"), "-o", str(work / "bench_re2c")],
                   check=True)
    return {"flex": work / "bench_flex", "re2c": work / "bench_re2c"}


def same_tokens(a: np.ndarray, b: np.ndarray) -> bool:
    return len(a) == len(b) and all(np.array_equal(a[f], b[f]) for f in ("start", "end", "kind"))


def token_folder() -> str | None:
    """Token files (hundreds of MB at 32 MiB) go to memory where there is a tmpfs."""
    return "/dev/shm" if Path("/dev/shm").is_dir() and os.access("/dev/shm", os.W_OK) else None


def run_counting_kernel_time(command: list[str]) -> tuple[str, float]:
    """The command's output and the CPU seconds it spent in the kernel (page faults: its
    token list's first touches)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_stime
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return output, resource.getrusage(resource.RUSAGE_CHILDREN).ru_stime - before


def bench_sample(path: Path, size: int, rounds: int, repeat: int, work: Path) -> dict:
    source = SourceFile(str(path), path.read_text(encoding="latin-1"))
    fsm_file = parse_file(source)
    token_set = compile_machines(fsm_file).machines[0]
    data = sample_input(token_set.name, size)
    data_path = work / f"{token_set.name}.input"
    data_path.write_bytes(data)
    row: dict = {"sample": token_set.name, "bytes": len(data)}
    lexers = build_lexers(fsm_file.machines[0], work)
    project = cached_token_project(token_set, str(path), token_hints(token_set, data[:1 << 16]))
    runner = project / "build" / f"{token_set.name}_run"
    times: dict[str, list[float]] = {key: [] for key in [*lexers, *(f"{s}{t}" for s, t in RUNS)]}
    kernel: dict[str, list[float]] = {key: [] for key in times}
    with tempfile.TemporaryDirectory(dir=token_folder()) as tokens_folder:
        out = Path(tokens_folder)
        for _ in range(rounds):
            for label, binary in lexers.items():
                output, system = run_counting_kernel_time(
                    [str(binary), str(data_path), str(repeat), str(out / f"{label}.tokens")])
                seconds, count = output.split()
                times[label].append(float(seconds))
                kernel[label].append(system / repeat)
                row["tokens"] = int(count)
            for scheme, threads in RUNS:
                key = f"{scheme}{threads}"
                output, system = run_counting_kernel_time(
                    [str(runner), str(data_path), "--scheme", scheme, "--threads", str(threads),
                     "--repeat", str(repeat), "--json", "--tokens-out", str(out / f"{key}.npy")])
                result = json.loads(output)
                times[key].append(result["seconds"])
                kernel[key].append(system / repeat)
                row[f"{key}_reason"] = f"{result['scheme']} ({result['reason']})"
        reference = np.fromfile(out / "flex.tokens", dtype=TOKEN_DTYPE)
        row["re2c_same"] = same_tokens(np.fromfile(out / "re2c.tokens", dtype=TOKEN_DTYPE),
                                       reference)
        for scheme, threads in RUNS:
            key = f"{scheme}{threads}"
            row[f"{key}_same"] = same_tokens(np.load(out / f"{key}.npy"), reference)
    for key, measured in times.items():
        row[key] = statistics.median(measured)
        row[f"{key}_kernel"] = kernel[key]
        row[f"{key}_ratio"] = statistics.median(f / x for f, x in zip(times["flex"], measured))
    return row


def report(rows: list[dict], rounds: int, repeat: int) -> str:
    load = os.getloadavg()[0]
    lines = ["# Token sets against flex and re2c (bench/fsm_tokens.py)", "",
             f"Machine: {platform.processor() or platform.machine()}, "
             f"{len(os.sched_getaffinity(0))} cores usable, load average {load:.1f} at the "
             f"end; {rounds} rounds of {repeat} runs (median of the runs, then median over "
             "the rounds); GB/s of input; ratio = median over the rounds of flex's seconds / "
             "this one's in the same round (above 1: faster than flex). Token lists: same = "
             "identical to flex's.", "",
             "| sample | MiB | tokens | flex GB/s | re2c | seq 1T | auto 1T | auto 2T | "
             "seq/flex | auto 2T/flex | boostfsm = flex | re2c = flex |", "|" + "---|" * 12]
    for row in rows:
        gbps = {key: row["bytes"] / row[key] / 1e9 for key in ("flex", "re2c", "seq1", "auto1",
                                                               "auto2")}
        same = all(row[f"{key}_same"] for key in ("seq1", "auto1", "auto2"))
        lines.append(f"| {row['sample']} | {row['bytes'] / 2**20:.0f} | {row['tokens']} | "
                     f"{gbps['flex']:.3f} | {gbps['re2c']:.3f} | {gbps['seq1']:.3f} | "
                     f"{gbps['auto1']:.3f} | {gbps['auto2']:.3f} | "
                     f"{row['seq1_ratio']:.2f} | {row['auto2_ratio']:.2f} | "
                     f"{'yes' if same else 'NO'} | {'yes' if row['re2c_same'] else 'NO'} |")
    lines += ["", "At one thread `auto` runs `seq`'s code (its reason: \"one thread: tokenizing "
              "sequentially\"), so the two differ only by chance. Kernel CPU seconds per run "
              "(page faults of the token list, and writing it out), round by round, seq 1T | "
              "auto 1T:", ""]
    lines += [f"- {row['sample']}: " + ", ".join(f"{s:.2f}" for s in row["seq1_kernel"]) + " | "
              + ", ".join(f"{s:.2f}" for s in row["auto1_kernel"]) for row in rows]
    lines += ["", "What `auto` did at 2 threads:", ""]
    lines += [f"- {row['sample']}: {row['auto2_reason']}" for row in rows]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=32 << 20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true",
                        help="3 rounds of 3 runs (under 3 minutes on 2 cores)")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.repeat = 3, 3
    for tool in ("flex", "re2c", "c++"):
        if shutil.which(tool) is None:
            sys.exit(f"fsm_tokens.py: needs {tool} (make bench-fsm-tokens installs flex and re2c)")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for path in sorted((REPO / "samples" / "tokens").glob("*.fsm")):
            rows.append(bench_sample(path, args.size, args.rounds, args.repeat, Path(folder)))
            print(json.dumps(rows[-1]), flush=True)
    text = report(rows, args.rounds, args.repeat)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "fsm_tokens.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
