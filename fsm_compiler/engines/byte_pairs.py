"""A model of text that knows which bytes follow which: the chance that a set of factors
occurs at a byte, from the byte pairs of prose, source code and logs (byte_pairs.txt,
written by byte_pairs_build.py).

    pair_bits(factors) -> float   # -log2 of the chance that one of them ends at a byte
    pair_bits_after(mask, factors) -> float  # ... that one starts right after a byte of mask

A string's chance is that of its first byte times that of each next byte after the one
before (a Markov chain over bytes; a byte set sums over its bytes). The hand-weighted
model of required_literals.py takes bytes as independent, which cannot tell that digits
come in runs (`00` ends 28,000 times a MiB in web logs) or that `!` is rarer in code and
logs than other punctuation; guards.py asks this model which side of a guarded pair to
scan for (rarer_side), and how selective a guard is right after an unbounded gap.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np

TABLE = Path(__file__).resolve().with_name("byte_pairs.txt")
PAIR_WEIGHT = 0.9  # of a byte's chance after another: the pair's; the rest its own chance
UNSEEN = 1e-7  # a byte's chance where the table never saw it (before normalising)


@functools.cache
def _chain() -> tuple[np.ndarray, np.ndarray]:
    """(chance of each byte, chance of each byte after each byte)."""
    pairs = np.zeros((256, 256))
    for line in TABLE.read_text().splitlines():
        if line and not line.startswith("#"):
            first, second, count = line.split()
            pairs[int(first, 16), int(second, 16)] = float(count)
    pairs /= pairs.sum()
    single = pairs.sum(axis=1) + UNSEEN
    single /= single.sum()
    rows = pairs.sum(axis=1, keepdims=True)
    after = np.divide(pairs, rows, out=np.tile(single, (256, 1)), where=rows > 0)
    return single, PAIR_WEIGHT * after + (1 - PAIR_WEIGHT) * single[None, :]


@functools.cache
def _members(mask: int) -> np.ndarray:
    return np.array([mask >> byte & 1 for byte in range(256)], dtype=float)


def _walk(reached: np.ndarray, factor: tuple[int, ...]) -> float:
    """The chance of `factor` from `reached` (each byte's chance to be its first byte)."""
    _, after = _chain()
    reached = reached * _members(factor[0])
    for mask in factor[1:]:
        reached = (reached @ after) * _members(mask)
    return float(reached.sum())


@functools.lru_cache(maxsize=65536)
def _chance(factor: tuple[int, ...]) -> float:
    return _walk(_chain()[0], factor) if factor else 1.0


def pair_bits_after(mask: int, factors: Iterable[tuple[int, ...]]) -> float:
    """-log2 of the chance that one of `factors` starts right after a byte of `mask`."""
    single, after = _chain()
    before = single * _members(mask)
    if before.sum() == 0:
        return math.inf
    first = (before / before.sum()) @ after  # each byte's chance right after one of mask
    chance = sum(_walk(first, tuple(factor)) for factor in factors if factor)
    return -math.log2(chance) if chance > 0 else math.inf


def pair_bits(factors: Iterable[tuple[int, ...]]) -> float:
    """-log2 of the chance that one of `factors` (strings of byte masks) ends at a byte."""
    chance = sum(_chance(tuple(factor)) for factor in factors)
    return -math.log2(chance) if chance > 0 else math.inf
