"""numpy dtypes of .ccn values, the rounding points of docs/ccn-language.md section 4, and
the numbers each dtype holds (params' defaults and --param values)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .types import compute_dtype, is_int

NUMPY_DTYPES: dict[str, np.dtype] = {
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "bool": np.dtype(np.bool_),
}


def np_dtype(dtype: str) -> np.dtype:
    return NUMPY_DTYPES[dtype]


def in_compute(value: np.ndarray, dtype: str) -> np.ndarray:
    """`value` converted to the dtype arithmetic on `dtype` is carried out in."""
    return np.asarray(value).astype(NUMPY_DTYPES[compute_dtype(dtype)], copy=False)


def rounded(value: np.ndarray, dtype: str) -> np.ndarray:
    """A rounding point: round to `dtype`, then hold the result in its compute dtype."""
    stored = np.asarray(value).astype(NUMPY_DTYPES[dtype])
    return stored.astype(NUMPY_DTYPES[compute_dtype(dtype)], copy=False)


def stored(value: np.ndarray, dtype: str) -> np.ndarray:
    """The value as it is stored in memory and in .npy files."""
    return np.asarray(value).astype(NUMPY_DTYPES[dtype], copy=False)


def dtype_range(dtype: str) -> str:
    """What a param of `dtype` can hold, in words: "-2147483648 to 2147483647"."""
    if is_int(dtype):
        info = np.iinfo(NUMPY_DTYPES[dtype])
        return f"{info.min} to {info.max}"
    return f"finite values up to ±{float(np.finfo(NUMPY_DTYPES[dtype]).max):.6g}"


def fits_dtype(value: int | float, dtype: str) -> bool:
    """Whether a finite number written for a param of `dtype` is one the dtype can hold:
    an integer in range, or a float that does not round to infinity (docs/ccn-language.md,
    section 3: a literal too large for its dtype is an error, not `inf`)."""
    if is_int(dtype):
        info = np.iinfo(NUMPY_DTYPES[dtype])
        return info.min <= value <= info.max
    try:
        number = float(value)
    except OverflowError:  # an integer literal beyond every float
        return False
    with np.errstate(over="ignore"):
        return bool(np.isfinite(np.asarray(number).astype(NUMPY_DTYPES[dtype])))
