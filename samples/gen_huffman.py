"""Generate samples/huffman.fsm: a decoder for a fixed Huffman code.

The code is built from fixed English letter frequencies (per mille) with a
deterministic Huffman construction (ties broken by insertion order). The decoder
reads the code as ASCII '0'/'1' characters, skips every other byte, and reports
the tag of each symbol where its last bit is read.

    python samples/gen_huffman.py            # rewrite samples/huffman.fsm
    python samples/gen_huffman.py --print    # show the code
"""

from __future__ import annotations

import heapq
import itertools
import sys
from pathlib import Path

# Symbol (a tag name) -> byte it stands for, and its frequency per mille.
FREQUENCIES = {
    "space": (" ", 182), "e": ("e", 102), "t": ("t", 75), "a": ("a", 65), "o": ("o", 62),
    "n": ("n", 57), "i": ("i", 57), "s": ("s", 53), "r": ("r", 50), "h": ("h", 50),
    "l": ("l", 33), "d": ("d", 33), "u": ("u", 23), "c": ("c", 22), "m": ("m", 20),
    "f": ("f", 18), "w": ("w", 17), "g": ("g", 16), "y": ("y", 14), "p": ("p", 14),
    "b": ("b", 12), "v": ("v", 8), "k": ("k", 6), "newline": ("\n", 5),
}


def huffman_code() -> dict[str, str]:
    """Symbol -> bit string, deterministic."""
    order = itertools.count()
    heap = [(weight, next(order), symbol) for symbol, (_, weight) in FREQUENCIES.items()]
    heapq.heapify(heap)
    while len(heap) > 1:
        weight_a, _, left = heapq.heappop(heap)
        weight_b, _, right = heapq.heappop(heap)
        heapq.heappush(heap, (weight_a + weight_b, next(order), (left, right)))
    code: dict[str, str] = {}

    def walk(node, prefix: str) -> None:
        if isinstance(node, str):
            code[node] = prefix
        else:
            walk(node[0], prefix + "0")
            walk(node[1], prefix + "1")

    walk(heap[0][2], "")
    return dict(sorted(code.items(), key=lambda item: (len(item[1]), item[1])))


def decoder_source(code: dict[str, str]) -> str:
    """The .fsm text: one state per proper code prefix, one reporting state per symbol."""
    prefixes = sorted({bits[:i] for bits in code.values() for i in range(len(bits))},
                      key=lambda p: (len(p), p))
    symbol_of = {bits: symbol for symbol, bits in code.items()}

    def target(bits: str) -> str:
        return f"got_{symbol_of[bits]}" if bits in symbol_of else f"n{bits}"

    def node(name: str, prefix: str, tags: str, other: str) -> str:
        return (f"    state {name}{tags} {{ '0' -> {target(prefix + '0')}  "
                f"'1' -> {target(prefix + '1')}  _ -> {other} }}")

    lines = [HEADER.rstrip(), "machine huffman {", "    start n"]
    lines += [node(f"n{p}", p, "", f"n{p}") for p in prefixes]
    lines += [node(f"got_{symbol}", "", f" report {symbol}", "n") for symbol in code]
    return "\n".join(lines) + "\n}\n"


HEADER = """
# huffman: decodes a fixed Huffman code of 24 symbols (English letter frequencies),
# written by samples/gen_huffman.py; do not edit by hand. The input is the code as
# ASCII '0'/'1' characters; other bytes are skipped. Each symbol's tag is reported
# where its last bit is read, so the counts are the decoded symbol frequencies.
# State n<bits> means "read <bits> of a code word"; got_<symbol> just decoded one.
"""


def encode(text: str, code: dict[str, str]) -> str:
    byte_to_symbol = {char: symbol for symbol, (char, _) in FREQUENCIES.items()}
    return "".join(code[byte_to_symbol[char]] for char in text)


def main(argv: list[str]) -> None:
    code = huffman_code()
    if "--print" in argv:
        for symbol, bits in code.items():
            print(f"{symbol:8} {bits}")
        return
    path = Path(__file__).parent / "huffman.fsm"
    path.write_text(decoder_source(code).lstrip())
    print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
