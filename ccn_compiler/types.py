"""Dtypes, shapes and layouts of .ccn values, and the dtype rules of docs/ccn-language.md section
4."""

from __future__ import annotations

from dataclasses import dataclass

from .dims import Dim  # an extent: an integer, a size variable or a polynomial of them

FLOAT_DTYPES = ("f16", "bf16", "f32", "f64")
INT_DTYPES = ("i32", "i64")
DTYPES = FLOAT_DTYPES + INT_DTYPES
ALL_DTYPES = DTYPES + ("bool",)

ITEM_SIZE = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i32": 4, "i64": 8, "bool": 1}


def is_float(dtype: str) -> bool:
    return dtype in FLOAT_DTYPES


def is_int(dtype: str) -> bool:
    return dtype in INT_DTYPES


def compute_dtype(dtype: str) -> str:
    """The dtype arithmetic is carried out in: f16 and bf16 compute in f32."""
    return "f32" if dtype in ("f16", "bf16") else dtype


def promote(a: str, b: str) -> str:
    """Result dtype of `a op b` for arithmetic (both numeric), by docs/ccn-language.md section 4."""
    if a == b:
        return a
    if "f64" in (a, b):
        return "f64"
    if is_float(a) and is_float(b):
        return "f32"  # f16 op f32, f16 op bf16, bf16 op f32
    if is_float(a) or is_float(b):
        return a if is_float(a) else b  # int op float is the float type
    return "i64"  # i32 op i64


@dataclass(frozen=True)
class Layout:
    """What each rank holds: `replicated`, `sliced(dim)` or `local`, optionally `in GROUP`."""

    kind: str  # replicated | sliced | local
    dim: int | None = None  # normalised, for sliced
    group: str | None = None  # None: the whole world

    def __str__(self) -> str:
        text = f"sliced({self.dim})" if self.kind == "sliced" else self.kind
        return f"{text} in {self.group}" if self.group else text

    @property
    def is_world_replicated(self) -> bool:
        return self.kind == "replicated" and self.group is None


REPLICATED = Layout("replicated")
LOCAL = Layout("local")


def sliced(dim: int, group: str | None = None) -> Layout:
    return Layout("sliced", dim, group)


def shape_text(shape: tuple[Dim, ...]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


@dataclass(frozen=True)
class ValueType:
    """dtype, logical shape (() for a scalar) and layout of a value."""

    dtype: str
    shape: tuple[Dim, ...]
    layout: Layout

    @property
    def is_scalar(self) -> bool:
        return self.shape == ()

    def __str__(self) -> str:
        shape = shape_text(self.shape) if self.shape else ""
        return f"{self.dtype}{shape} {self.layout}"
