"""Dropout masks and `--random` inputs for the numpy oracles, written from
docs/ccn-language.md (sections 5 and 10) without the package's `philox` module.

The package vectorises Philox over numpy arrays; this copy works one element at a
time on Python integers, so a wiring mistake in either (counter word order, key
split, the `>> 8` and `2^-24`, the `u >= p` comparison, the index of an element in
the logical shape) shows up as a difference between the backends and the oracles.
Both are checked against Random123's known-answer vectors (tests/unit/test_philox.py
and tests/e2e/test_numpy_oracles.py).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import ml_dtypes
import numpy as np

WORD = 0xFFFFFFFF


def philox_x0(counter: tuple[int, int, int, int], key: tuple[int, int]) -> int:
    """The first output word of Philox4x32-10 (Random123), one counter at a time."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for round_index in range(10):
        if round_index:
            k0, k1 = (k0 + 0x9E3779B9) & WORD, (k1 + 0xBB67AE85) & WORD
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0, p1 & WORD, (p0 >> 32) ^ c3 ^ k1, p0 & WORD)
    return c0


def uniform(index: int, word2: int, word3: int, key64: int) -> float:
    """`u = (x0 >> 8) * 2^-24` for counter `(idx_lo, idx_hi, word2, word3)` and a 64-bit key."""
    key64 &= (1 << 64) - 1
    x0 = philox_x0((index & WORD, index >> 32, word2 & WORD, word3 & WORD),
                   (key64 & WORD, key64 >> 32))
    return (x0 >> 8) / float(1 << 24)


def keep_mask(shape: Sequence[int], p: float, rank_or_0: int, site: int,
              seed_plus_step: int) -> np.ndarray:
    """True where `dropout` keeps the element; `idx` counts row-major in the logical shape."""
    threshold = float(np.float32(p))
    flat = [uniform(index, rank_or_0, site, seed_plus_step) >= threshold
            for index in range(int(np.prod(shape, dtype=np.int64)))]
    return np.array(flat, dtype=bool).reshape(tuple(shape))


def dropout(x: np.ndarray, p: float, rank_or_0: int, site: int, seed_plus_step: int) -> np.ndarray:
    """`dropout(x, p)` over the whole logical tensor `x`: kept elements times `1/(1-p)` in f32."""
    keep = keep_mask(x.shape, p, rank_or_0, site, seed_plus_step)
    p32 = np.float32(p)
    with np.errstate(divide="ignore"):
        scale = np.float32(1.0) / (np.float32(1.0) - p32)
    wide = np.float64 if x.dtype == np.float64 else np.float32
    with np.errstate(invalid="ignore", over="ignore"):
        kept = x.astype(wide) * wide(scale)
    return np.where(keep, kept, wide(0.0)).astype(x.dtype)


def random_input(shape: Sequence[int], dtype: str, seed: int, ordinal: int,
                 rank_or_0: int) -> np.ndarray:
    """A `--random` value: `2u - 1` with word3 `0x80000000 | ordinal`, in the declared dtype
    (floats rounded to nearest, integers `floor(100 * v)`, as docs/ccn.md says)."""
    values = [2.0 * uniform(index, rank_or_0, 0x80000000 | ordinal, seed) - 1.0
              for index, _ in enumerate(itertools.product(*(range(n) for n in shape)))]
    exact = np.array(values, dtype=np.float64).reshape(tuple(shape))
    target = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32,
              "f64": np.float64, "i32": np.int32, "i64": np.int64, "bool": np.bool_}[dtype]
    if np.issubdtype(np.dtype(target), np.integer):
        return np.floor(exact * 100.0).astype(target)
    return exact.astype(target)

