"""Deterministic inputs for the .fsm samples (the same bytes on every machine).

    python samples/inputs.py OUTDIR [--size BYTES]   # writes OUTDIR/<sample>.txt

Each function returns about `size` bytes for the sample of the same name.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_huffman import FREQUENCIES, encode, huffman_code  # noqa: E402

DEFAULT_SIZE = 1 << 20


def div7(size: int, seed: int = 7) -> bytes:
    """Lines of random binary numbers, 1 to 40 bits each."""
    rng, lines, total = random.Random(seed), [], 0
    while total < size:
        line = format(rng.getrandbits(rng.randint(1, 40)) | 1, "b")
        lines.append(line)
        total += len(line) + 1
    return ("\n".join(lines) + "\n").encode()


_C_SNIPPETS = [
    "int {n} = {k};\n", "if ({n} > {k}) {{ {n}--; }}\n", "/* {w} {w} {w} */\n",
    "// {w} {w}: {w}\n", 'printf("{w} %d\\n", {n});\n', "char c = '\\'';\n",
    'const char *s = "{w} \\"{w}\\" {w}";\n', "for (int i = 0; i < {k}; i++) {{ x /= 2; }}\n",
    "/*\n * {w} {w} {w}\n * {w} {w}\n */\n", "return {n} / {k};\n",
]
_WORDS = ["alpha", "beta", "gamma", "state", "buffer", "count", "index", "value", "TODO"]


def clexer(size: int, seed: int = 11) -> bytes:
    """C-like source with comments, strings, chars and braces."""
    rng, parts, total = random.Random(seed), [], 0
    while total < size:
        snippet = rng.choice(_C_SNIPPETS).format(
            n=rng.choice(["x", "y", "n", "total"]), k=rng.randint(0, 999),
            w=rng.choice(_WORDS))
        if rng.random() < 0.01:  # a long block comment now and then
            snippet = "/* " + " ".join(rng.choice(_WORDS) for _ in range(400)) + " */\n"
        parts.append(snippet)
        total += len(snippet)
    return "".join(parts).encode()


def _csv_field(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.6:
        return rng.choice(_WORDS) + str(rng.randint(0, 99))
    if kind < 0.8:
        return str(rng.uniform(-1000, 1000))[:8]
    inner = rng.choice(['a, b', 'say ""hi""', 'two\nlines', 'plain', '""'])
    return f'"{inner}"'


def csv(size: int, seed: int = 13) -> bytes:
    """Records of 3-8 fields; some quoted with commas, newlines and escaped quotes."""
    rng, lines, total = random.Random(seed), [], 0
    while total < size:
        line = ",".join(_csv_field(rng) for _ in range(rng.randint(3, 8)))
        lines.append(line)
        total += len(line) + 1
    return ("\n".join(lines) + "\n").encode()


_PATHS = ["/", "/index.html", "/img/logo.png", "/api/v1/items?id={k}", "/search?q={w}"]
_ATTACKS = [
    "/wp-admin/setup.php", "/../../../../etc/passwd", "/item?id=1 UNION ALL SELECT pass",
    "/q?x=<script>alert(1)</script>", "/cgi-bin/run?c=/bin/sh", "/.env",
    "/login?u=admin' or '1'='1", "/page?id=1 AND sleep(5)", "/%2E%2E%2Fetc%2Fshadow",
]
_AGENTS = ["Mozilla/5.0 (X11; Linux x86_64)", "curl/8.1", "sqlmap/1.7", "Nikto/2.5", "Go-http"]


def weblog(size: int, seed: int = 17) -> bytes:
    """Apache combined-format lines after a '#' header; about 3% are attacks."""
    rng = random.Random(seed)
    lines, total = ["#Fields: host ident user time request status bytes referer agent"], 0
    while total < size:
        attack = rng.random() < 0.03
        path = rng.choice(_ATTACKS if attack else _PATHS).format(
            k=rng.randint(1, 9999), w=rng.choice(_WORDS))
        host = ".".join(str(rng.randint(1, 254)) for _ in range(4))
        status = rng.choice([200] * 20 + [301, 404, 404, 500, 503])
        method = "POST" if rng.random() < 0.1 else "GET"
        agent = rng.choice(_AGENTS[2:] if attack else _AGENTS[:2] + _AGENTS[4:])
        line = (f'{host} - - [10/Oct/2024:13:{rng.randint(10, 59)}:{rng.randint(10, 59)} '
                f'+0000] "{method} {path} HTTP/1.1" {status} {rng.randint(0, 50000)} "-" '
                f'"{agent}"')
        lines.append(line)
        total += len(line) + 1
    return ("\n".join(lines) + "\n").encode()


def huffman(size: int, seed: int = 19) -> bytes:
    """Random text with the code's letter frequencies, encoded, in lines of 64 bits."""
    rng, code = random.Random(seed), huffman_code()
    chars = [char for char, _ in FREQUENCIES.values()]
    weights = [weight for _, weight in FREQUENCIES.values()]
    bits = encode("".join(rng.choices(chars, weights, k=size // 4)), code)[:size]
    return "\n".join(bits[i:i + 64] for i in range(0, len(bits), 64)).encode() + b"\n"


GENERATORS = {"div7": div7, "clexer": clexer, "csv": csv, "weblog": weblog, "huffman": huffman}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--size", type=int, default=DEFAULT_SIZE)
    args = parser.parse_args()
    args.outdir.mkdir(parents=True, exist_ok=True)
    for name, generate in GENERATORS.items():
        path = args.outdir / f"{name}.txt"
        path.write_bytes(generate(args.size))
        print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
