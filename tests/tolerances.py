"""When two results agree: docs/ccn-language.md section 13, reusable by every backend and schedule
test.

Per output, `max|a - b| <= atol + rtol * max|b|` with `(rtol, atol)` by dtype, exact
equality for integers, booleans and dropout masks. An output that depends on a
lower-precision value takes the tolerance of the lowest-precision dtype it depends
on: pass that dtype (see `lowest_precision`).
"""

from __future__ import annotations

import numpy as np

TOLERANCES: dict[str, tuple[float, float]] = {
    "f64": (1e-12, 1e-14),
    "f32": (1e-5, 1e-6),
    "f16": (2e-3, 1e-3),
    "bf16": (1.6e-2, 1e-2),
}
EXACT_DTYPES = ("i32", "i64", "bool")
PRECISION_ORDER = ("bf16", "f16", "f32", "f64")


def lowest_precision(*dtypes: str) -> str:
    """The floating dtype with the loosest tolerance among `dtypes` (integers are ignored)."""
    floats = [d for d in dtypes if d in PRECISION_ORDER]
    if not floats:
        return dtypes[0]
    return min(floats, key=PRECISION_ORDER.index)


def max_abs_difference(actual: np.ndarray, expected: np.ndarray) -> float:
    """`max|a - b|` in f64 (0 for empty arrays)."""
    if expected.size == 0:
        return 0.0
    return float(np.max(np.abs(actual.astype(np.float64) - expected.astype(np.float64))))


def assert_close(actual: np.ndarray, expected: np.ndarray, dtype: str, what: str = "") -> None:
    """Assert spec-section-6 agreement of `actual` with `expected` at `dtype`'s tolerance."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    label = f"{what}: " if what else ""
    assert actual.shape == expected.shape, (
        f"{label}shape {actual.shape} differs from expected {expected.shape}")
    if dtype in EXACT_DTYPES:
        mismatches = int(np.count_nonzero(actual != expected))
        assert mismatches == 0, f"{label}{mismatches} elements differ ({dtype} must be exact)"
        return
    rtol, atol = TOLERANCES[dtype]
    a64, b64 = actual.astype(np.float64), expected.astype(np.float64)
    nan_a, nan_b = np.isnan(a64), np.isnan(b64)
    assert np.array_equal(nan_a, nan_b), f"{label}NaN positions differ"
    a64, b64 = np.where(nan_a, 0.0, a64), np.where(nan_b, 0.0, b64)
    difference = max_abs_difference(a64, b64)
    bound = atol + rtol * (float(np.max(np.abs(b64))) if b64.size else 0.0)
    if not difference <= bound:
        worst = np.unravel_index(int(np.argmax(np.abs(a64 - b64))), a64.shape)
        raise AssertionError(
            f"{label}max|a - b| = {difference:.3g} > {bound:.3g} ({dtype}: rtol {rtol}, "
            f"atol {atol}); worst at {tuple(int(i) for i in worst)}: "
            f"{a64[worst]!r} vs expected {b64[worst]!r}")
