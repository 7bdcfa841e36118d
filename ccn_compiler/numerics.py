"""numpy dtypes of .ccn values and the rounding points of docs/ccn-language.md section 4."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .types import compute_dtype

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
