"""Philox4x32-10 (Random123), vectorised over numpy arrays, and its two uses (docs/ccn-language.md
sections 5 and 10).

The generator is a pure function of a 128-bit counter and a 64-bit key, so every
element of a tensor gets its own random word without any sequential state:

- `dropout` (docs/ccn-language.md section 5): counter `(idx_lo32, idx_hi32, rank_or_0, site)`,
  key `(s_lo32, s_hi32)` with `s = seed + step`; keep an element when `u >= p`.
- `--random` inputs (docs/ccn-language.md section 10): counter
  `(idx_lo32, idx_hi32, rank_or_0, 0x80000000 | declaration ordinal)`, key
  `(seed_lo32, seed_hi32)`; the value is `2u - 1`, uniform in `[-1, 1)`.

In both, `u = (x0 >> 8) * 2**-24` where `x0` is the first output word, and `idx`
is the row-major 64-bit index of the element in the *logical* shape, so a rank's
block draws exactly the numbers the whole tensor would draw at those positions.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..numerics import NUMPY_DTYPES

PHILOX_M0 = 0xD2511F53
PHILOX_M1 = 0xCD9E8D57
PHILOX_W0 = 0x9E3779B9
PHILOX_W1 = 0xBB67AE85
PHILOX_ROUNDS = 10

MASK32 = 0xFFFFFFFF
MASK64 = (1 << 64) - 1
RANDOM_INPUT_TAG = 0x80000000

UInt32Words = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]



def _as_u32(value: np.ndarray | int) -> np.ndarray:
    """A uint32 array of `value` (Python ints are taken modulo 2**32)."""
    if isinstance(value, int):
        return np.asarray(value & MASK32, dtype=np.uint32)
    return np.asarray(value).astype(np.uint32, copy=False)


def _mulhilo(multiplier: int, word: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """High and low 32-bit halves of the 64-bit product `multiplier * word`."""
    product = word.astype(np.uint64) * np.uint64(multiplier)
    return (product >> np.uint64(32)).astype(np.uint32), product.astype(np.uint32)


def _philox_round(words: UInt32Words, k0: np.ndarray, k1: np.ndarray) -> UInt32Words:
    c0, c1, c2, c3 = words
    hi0, lo0 = _mulhilo(PHILOX_M0, c0)
    hi1, lo1 = _mulhilo(PHILOX_M1, c2)
    return hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0


def philox4x32_10(
    c0: np.ndarray | int,
    c1: np.ndarray | int,
    c2: np.ndarray | int,
    c3: np.ndarray | int,
    k0: np.ndarray | int,
    k1: np.ndarray | int,
) -> UInt32Words:
    """The four output words of Philox4x32-10 for counter `(c0..c3)` and key `(k0, k1)`.

    Arguments broadcast against each other; the results are uint32 arrays.
    """
    words = np.broadcast_arrays(*(_as_u32(v) for v in (c0, c1, c2, c3)))
    state: UInt32Words = tuple(w.astype(np.uint32) for w in words)  # type: ignore[assignment]
    key0, key1 = _as_u32(k0), _as_u32(k1)
    for round_index in range(PHILOX_ROUNDS):
        if round_index > 0:
            key0 = (key0.astype(np.uint64) + np.uint64(PHILOX_W0)).astype(np.uint32)
            key1 = (key1.astype(np.uint64) + np.uint64(PHILOX_W1)).astype(np.uint32)
        state = _philox_round(state, key0, key1)
    return state


def uniform_from_bits(x0: np.ndarray) -> np.ndarray:
    """`(x0 >> 8) * 2**-24` as float32: 24 random bits, exactly representable, in `[0, 1)`."""
    top24 = np.asarray(x0, dtype=np.uint32) >> np.uint32(8)
    return top24.astype(np.float32) * np.float32(2.0**-24)


def element_uniforms(indices: np.ndarray, word2: int, word3: int, key64: int) -> np.ndarray:
    """Uniforms in `[0, 1)` for counter `(idx_lo32, idx_hi32, word2, word3)`, key `key64`.

    `indices` are row-major logical element indices (any integer array, read as uint64);
    the result has their shape. `key64` is taken modulo 2**64 and split into lo/hi words.
    """
    idx = np.asarray(indices).astype(np.uint64)
    idx_lo = (idx & np.uint64(MASK32)).astype(np.uint32)
    idx_hi = (idx >> np.uint64(32)).astype(np.uint32)
    key = key64 & MASK64
    x0, _, _, _ = philox4x32_10(idx_lo, idx_hi, word2, word3, key & MASK32, key >> 32)
    return uniform_from_bits(x0)


def logical_indices(shape: Sequence[int], region: Sequence[slice] | None = None) -> np.ndarray:
    """Row-major uint64 indices, in the logical `shape`, of the elements of `region`.

    `region` is one slice per dim (a rank's block); `None` means the whole tensor.
    The result has the region's shape.
    """
    shape = tuple(int(n) for n in shape)
    region = tuple(region) if region is not None else tuple(slice(0, n) for n in shape)
    indices = np.zeros((), dtype=np.uint64)
    stride = 1
    for dim in reversed(range(len(shape))):
        positions = np.arange(shape[dim], dtype=np.uint64)[region[dim]] * np.uint64(stride)
        indices = indices + positions.reshape((-1,) + (1,) * (len(shape) - 1 - dim))
        stride *= shape[dim]
    return np.broadcast_to(indices, _region_shape(shape, region)).copy()


def _region_shape(shape: tuple[int, ...], region: tuple[slice, ...]) -> tuple[int, ...]:
    return tuple(len(range(*s.indices(n))) for s, n in zip(region, shape))


def dropout_keep_mask(
    p: float, indices: np.ndarray, rank_or_0: int, site: int, seed_plus_step: int
) -> np.ndarray:
    """Boolean mask, shaped like `indices`: True where the element is kept (`u >= f32(p)`)."""
    u = element_uniforms(indices, rank_or_0, site, seed_plus_step)
    return u >= np.float32(p)


def dropout(
    x: np.ndarray,
    p: float,
    indices: np.ndarray,
    rank_or_0: int,
    site: int,
    seed_plus_step: int,
) -> np.ndarray:
    """`dropout(x, p)` as docs/ccn-language.md section 5 defines it, rounded to `x`'s dtype
    at the end.

    `p` is converted to f32; the scale `1/(1-p)` is computed in f32; kept elements are
    multiplied by it in f32 (f64 for an f64 `x`, see docs/ccn.md); dropped elements are 0,
    so `p = 1` gives zeros. `indices` are the logical indices of `x`'s elements.
    """
    x = np.asarray(x)
    keep = dropout_keep_mask(p, indices, rank_or_0, site, seed_plus_step)
    p32 = np.float32(p)
    with np.errstate(divide="ignore", over="ignore"):
        scale = np.float32(1.0) / (np.float32(1.0) - p32)
    compute_dtype = np.float64 if x.dtype == np.float64 else np.float32
    values = x.astype(compute_dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        kept = values * compute_dtype(scale)
    result = np.where(keep, kept, compute_dtype(0.0))
    return result.astype(x.dtype)


def random_uniform_pm1(
    shape: Sequence[int], seed: int, ordinal: int, rank_or_0: int
) -> np.ndarray:
    """Float32 values `2u - 1` in `[-1, 1)` for the whole logical `shape` (exact in f32)."""
    indices = logical_indices(shape)
    u = element_uniforms(indices, rank_or_0, RANDOM_INPUT_TAG | ordinal, seed)
    return np.float32(2.0) * u - np.float32(1.0)


def random_tensor(
    shape: Sequence[int], dtype: str, seed: int, ordinal: int, rank_or_0: int
) -> np.ndarray:
    """A `--random` input or initial state: the whole logical tensor, in the declared dtype.

    Floating dtypes get `2u - 1` rounded to nearest; integer dtypes get `floor(100 * v)`,
    integers in `[-100, 99]` (documented under "Random inputs" in docs/ccn.md).
    """
    values = random_uniform_pm1(shape, seed, ordinal, rank_or_0)
    target = NUMPY_DTYPES[dtype]
    if np.issubdtype(target, np.integer):
        return np.floor(values.astype(np.float64) * 100.0).astype(target)
    return values.astype(target)
