"""boostfsm token sets against flex and re2c: each sample lexer (samples/tokens) over a
32 MiB input, tokenizing from memory and building the token list, side by side in one
run: flex (`flex -8 -Cf`), re2c, and boostfsm's `seq` and `auto` at 1 and 2 threads.
Every token list is checked identical to flex's.

    .venv/bin/python bench/fsm_tokens.py [--size BYTES] [--repeat K]   (make bench-fsm-tokens)

Inputs: C is the headers under /usr/include concatenated (repeated up to the size);
JSON and logs come from samples/tokens/token_inputs.py. The flex and re2c lexers are
generated from the same parsed rules (bench/fsm_tokens_lexgen.py) and compiled with
`c++ -O2`. Times are medians of K runs; GB/s = input bytes / seconds. Writes
bench/results/fsm_tokens.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
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


def bench_sample(path: Path, size: int, repeat: int, work: Path) -> dict:
    source = SourceFile(str(path), path.read_text(encoding="latin-1"))
    fsm_file = parse_file(source)
    token_set = compile_machines(fsm_file).machines[0]
    data = sample_input(token_set.name, size)
    data_path = work / f"{token_set.name}.input"
    data_path.write_bytes(data)
    row: dict = {"sample": token_set.name, "bytes": len(data)}
    lexers = build_lexers(fsm_file.machines[0], work)
    reference = None
    for label, binary in lexers.items():
        out = work / f"{label}.tokens"
        seconds, count = subprocess.run([str(binary), str(data_path), str(repeat), str(out)],
                                        capture_output=True, text=True, check=True).stdout.split()
        tokens = np.fromfile(out, dtype=TOKEN_DTYPE)
        reference = tokens if reference is None else reference
        row[label] = float(seconds)
        row[f"{label}_same"] = same_tokens(tokens, reference)
        row["tokens"] = int(count)
    project = cached_token_project(token_set, str(path), token_hints(token_set, data[:1 << 16]))
    runner = project / "build" / f"{token_set.name}_run"
    for scheme, threads in RUNS:
        out = work / f"{scheme}{threads}.npy"
        done = subprocess.run([str(runner), str(data_path), "--scheme", scheme, "--threads",
                               str(threads), "--repeat", str(repeat), "--json", "--tokens-out",
                               str(out)], capture_output=True, text=True, check=True)
        result = json.loads(done.stdout)
        key = f"{scheme}{threads}"
        row[key] = result["seconds"]
        row[f"{key}_same"] = same_tokens(np.load(out), reference)
        row[f"{key}_reason"] = f"{result['scheme']}: {result['reason']}"
    return row


def report(rows: list[dict], repeat: int) -> str:
    lines = ["# Token sets against flex and re2c (bench/fsm_tokens.py)", "",
             f"Machine: {platform.processor() or platform.machine()}, "
             f"{len(__import__('os').sched_getaffinity(0))} cores usable; medians of {repeat} "
             "runs; GB/s of input; ratio = flex's seconds / this one's (above 1: faster "
             "than flex). Token lists: same = identical to flex's.", "",
             "| sample | MiB | tokens | flex GB/s | re2c | seq 1T | auto 1T | auto 2T | "
             "seq/flex | auto 2T/flex | boostfsm = flex | re2c = flex |", "|" + "---|" * 12]
    for row in rows:
        gbps = {key: row["bytes"] / row[key] / 1e9 for key in ("flex", "re2c", "seq1", "auto1",
                                                               "auto2")}
        same = all(row[f"{key}_same"] for key in ("seq1", "auto1", "auto2"))
        lines.append(f"| {row['sample']} | {row['bytes'] / 2**20:.0f} | {row['tokens']} | "
                     f"{gbps['flex']:.3f} | {gbps['re2c']:.3f} | {gbps['seq1']:.3f} | "
                     f"{gbps['auto1']:.3f} | {gbps['auto2']:.3f} | "
                     f"{row['flex'] / row['seq1']:.2f} | {row['flex'] / row['auto2']:.2f} | "
                     f"{'yes' if same else 'NO'} | {'yes' if row['re2c_same'] else 'NO'} |")
    lines += ["", "What `auto` did at 2 threads:", ""]
    lines += [f"- {row['sample']}: {row['auto2_reason']}" for row in rows]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=32 << 20)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for tool in ("flex", "re2c", "c++"):
        if shutil.which(tool) is None:
            sys.exit(f"fsm_tokens.py: needs {tool} (make bench-fsm-tokens installs flex and re2c)")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for path in sorted((REPO / "samples" / "tokens").glob("*.fsm")):
            rows.append(bench_sample(path, args.size, args.repeat, Path(folder)))
            print(json.dumps(rows[-1]), flush=True)
    text = report(rows, args.repeat)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "fsm_tokens.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
