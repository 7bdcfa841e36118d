"""When two results agree: docs/ccn-language.md section 13, for every backend, schedule and test.

Per output, `max|a - b| <= atol + rtol * max|b|` with `(rtol, atol)` by dtype, exact
equality for integers, booleans and dropout masks. An output that depends on a
lower-precision value takes the tolerance of the lowest-precision dtype it depends
on (`dependency_dtype`). `assert_same_outputs` compares two runs' output folders
(the runner contract of docs/ccn-language.md section 10) file by file.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .. import ir
from ..numerics import NUMPY_DTYPES

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


def dependency_dtype(program: ir.Program, name: str) -> str:
    """The lowest-precision dtype among `name` and every value it depends on."""
    seen, todo, dtypes = set(), [name], []
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        dtypes.append(program.value_type(current).dtype)
        stage = program.stage(current)
        if stage is not None:
            todo += [n.name for e in ir.stage_exprs(stage) for n in ir.walk(e)
                     if isinstance(n, ir.Ref)]
    return lowest_precision(*dtypes)


def max_abs_difference(actual: np.ndarray, expected: np.ndarray) -> float:
    """`max|a - b|` in f64 (0 for empty arrays)."""
    if expected.size == 0:
        return 0.0
    return float(np.max(np.abs(actual.astype(np.float64) - expected.astype(np.float64))))


def disagreement(actual: np.ndarray, expected: np.ndarray, dtype: str) -> str | None:
    """Why `actual` does not agree with `expected` at `dtype`'s tolerance; None if it does."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.shape != expected.shape:
        return f"shape {actual.shape} differs from expected {expected.shape}"
    if dtype in EXACT_DTYPES:
        mismatches = int(np.count_nonzero(actual != expected))
        return f"{mismatches} elements differ ({dtype} must be exact)" if mismatches else None
    rtol, atol = TOLERANCES[dtype]
    a64, b64 = actual.astype(np.float64), expected.astype(np.float64)
    nan_a, nan_b = np.isnan(a64), np.isnan(b64)
    if not np.array_equal(nan_a, nan_b):
        return "NaN positions differ"
    a64, b64 = np.where(nan_a, 0.0, a64), np.where(nan_b, 0.0, b64)
    difference = max_abs_difference(a64, b64)
    bound = atol + rtol * (float(np.max(np.abs(b64))) if b64.size else 0.0)
    if difference <= bound:
        return None
    worst = np.unravel_index(int(np.argmax(np.abs(a64 - b64))), a64.shape)
    return (f"max|a - b| = {difference:.3g} > {bound:.3g} ({dtype}: rtol {rtol}, "
            f"atol {atol}); worst at {tuple(int(i) for i in worst)}: "
            f"{a64[worst]!r} vs expected {b64[worst]!r}")


def assert_close(actual: np.ndarray, expected: np.ndarray, dtype: str, what: str = "") -> None:
    """Raise AssertionError unless `actual` agrees with `expected` at `dtype`'s tolerance."""
    reason = disagreement(actual, expected, dtype)
    if reason is not None:
        raise AssertionError(f"{what}: {reason}" if what else reason)


def load_output(path: Path, dtype: str) -> np.ndarray:
    """One output file of a run (bf16 is stored as 2-byte void, as numpy has no bf16)."""
    array = np.load(path, allow_pickle=False)
    return array.view(NUMPY_DTYPES["bf16"]) if dtype == "bf16" else array


def assert_same_outputs(program: ir.Program, actual: Path, expected: Path,
                        what: str = "") -> None:
    """Two runs of one schedule of `program` at one rank count wrote agreeing outputs:
    both manifests list the program's results, and every file agrees at the tolerance
    of its value's `dependency_dtype`. Raises AssertionError naming the first that
    does not."""
    prefix = f"{what} " if what else ""
    names = [file_name for file_name, _, _ in program.result_types()]
    manifests = {}
    for folder in (actual, expected):
        manifest = json.loads((folder / "manifest.json").read_text())
        listed = [entry["name"] for entry in manifest["outputs"]]
        if listed != names:
            raise AssertionError(f"{prefix}{folder}/manifest.json lists outputs {listed}, "
                                 f"the program has {names}")
        manifests[folder] = manifest
    values = dict(program.result_names())
    for mine, theirs in zip(manifests[actual]["outputs"], manifests[expected]["outputs"]):
        if mine["files"] != theirs["files"]:
            raise AssertionError(f"{prefix}{mine['name']}: files {mine['files']} differ from "
                                 f"expected {theirs['files']}")
        tolerance = dependency_dtype(program, values[mine["name"]])
        for file in mine["files"]:
            assert_close(load_output(actual / file, mine["dtype"]),
                         load_output(expected / file, mine["dtype"]), tolerance,
                         f"{prefix}{file}")
