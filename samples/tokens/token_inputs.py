"""Deterministic inputs for the token-set samples (the same bytes on every machine).

    python samples/tokens/token_inputs.py OUTDIR [--size BYTES]   # writes OUTDIR/<sample>.txt

C comes from the mode-tracker sample's generator (samples/inputs.py) with preprocessor
lines added; JSON is generated records; logs mix web-server and application lines.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import inputs as machine_inputs  # noqa: E402

DEFAULT_SIZE = 1 << 20


def clexer_tokens(size: int, seed: int = 23) -> bytes:
    """C statements, comments and strings, with #include/#define lines (some continued)."""
    rng = random.Random(seed)
    body = machine_inputs.clexer(size, seed).split(b"\n")
    lines = []
    for line in body:
        if rng.random() < 0.05:
            lines.append(rng.choice([b"#include <stdio.h>", b"#define MAX(a, b) \\",
                                     b"#if defined(X) && X > 2"]))
            if lines[-1].endswith(b"\\"):
                lines.append(b"    ((a) > (b) ? (a) : (b))")
        lines.append(line + rng.choice([b"", b"", b" x >>= 0x1fUL; p->q = 1.5e-3f;"]))
    return b"\n".join(lines)[:size]


def json_tokens(size: int, seed: int = 29) -> bytes:
    """An array of records: strings with escapes, numbers, literals, nesting."""
    rng, parts, total = random.Random(seed), [], 0
    while total < size:
        name = rng.choice(["alpha", 'b"eta', "\u00e9t\u00e9", "line\nbreak", ""])
        record = {"id": rng.randint(0, 10**6), "name": name,
                  "score": round(rng.uniform(-1e3, 1e3), rng.randint(0, 4)),
                  "exp": rng.choice([1e-7, 6.02e23, -0.0, 12]),
                  "ok": rng.choice([True, False, None]),
                  "tags": [rng.choice(["x", "y", "z"]) for _ in range(rng.randint(0, 3))],
                  "nested": {"depth": [[1, 2], {"k": "v"}]}}
        text = json.dumps(record, indent=rng.choice([None, 1]))
        parts.append(text)
        total += len(text) + 2
    return ("[" + ",\n".join(parts) + "]").encode()


def log_tokens(size: int, seed: int = 31) -> bytes:
    """Web-server lines (samples/inputs.py) and application lines with levels and pairs."""
    rng = random.Random(seed)
    web = machine_inputs.weblog(size // 2, seed).split(b"\n")
    lines, total = [], 0
    messages = ["ok", 'retry \\"later\\"', "timeout"]
    for line in web:
        lines.append(line)
        message = rng.choice(messages)
        clock = f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}"
        app = (f"2024-10-10T13:{clock}Z "
               f"{rng.choice(['INFO', 'WARN', 'ERROR', 'DEBUG'])} [worker-{rng.randint(1, 8)}] "
               f"request done user=u{rng.randint(1, 99)} ms={rng.uniform(0, 500):.2f} "
               f'msg="{message}"')
        lines.append(app.encode())
        total += len(line) + len(app) + 2
        if total >= size:
            break
    return (b"\n".join(lines) + b"\n")[:size]


GENERATORS = {"clexer_tokens": clexer_tokens, "json_tokens": json_tokens,
              "log_tokens": log_tokens}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--size", type=int, default=DEFAULT_SIZE)
    args = parser.parse_args()
    args.outdir.mkdir(parents=True, exist_ok=True)
    for name, generate in GENERATORS.items():
        (args.outdir / f"{name}.txt").write_bytes(generate(args.size))


if __name__ == "__main__":
    main()
