"""The extents of .ccn shapes (docs/ccn-language.md, "Shape expressions"): an integer, a
size variable, or a sum of products of them (`3 * H * Dh`, `T + 1`), always kept in one
canonical form, so that two ways of writing an extent compare equal (`H * Dh` is
`Dh * H`) and a plain variable or integer stays a `str` or an `int`."""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

Monomial = tuple[str, ...]  # size variables multiplied, sorted (a repeated one squares)


@dataclass(frozen=True)
class DimPoly:
    """An extent that is neither one variable nor one integer: positive integer
    coefficients times monomials, sorted by monomial (the constant term first)."""

    terms: tuple[tuple[Monomial, int], ...]

    def __str__(self) -> str:
        return " + ".join(_term_text(m, c) for m, c in self.terms)


Dim = str | int | DimPoly


def _term_text(monomial: Monomial, coefficient: int) -> str:
    factors = ([str(coefficient)] if coefficient != 1 or not monomial else []) + list(monomial)
    return " * ".join(factors)


def _terms(dim: Dim) -> dict[Monomial, int]:
    if isinstance(dim, int):
        return {(): dim}
    if isinstance(dim, str):
        return {(dim,): 1}
    return dict(dim.terms)


def _dim(terms: Mapping[Monomial, int]) -> Dim:
    """The canonical Dim of a polynomial."""
    kept = sorted((m, c) for m, c in terms.items() if c)
    if not kept:
        return 0
    if len(kept) == 1:
        monomial, coefficient = kept[0]
        if not monomial:
            return coefficient
        if len(monomial) == 1 and coefficient == 1:
            return monomial[0]
    return DimPoly(tuple(kept))


def add(a: Dim, b: Dim) -> Dim:
    terms = _terms(a)
    for monomial, coefficient in _terms(b).items():
        terms[monomial] = terms.get(monomial, 0) + coefficient
    return _dim(terms)


def multiply(a: Dim, b: Dim) -> Dim:
    terms: dict[Monomial, int] = {}
    for ma, ca in _terms(a).items():
        for mb, cb in _terms(b).items():
            monomial = tuple(sorted(ma + mb))
            terms[monomial] = terms.get(monomial, 0) + ca * cb
    return _dim(terms)


def subtract(a: Dim, b: Dim) -> Dim:
    """a - b, whose coefficients may be negative (see `never_negative`)."""
    return add(a, multiply(-1, b))


def never_negative(dim: Dim) -> bool:
    """Whether `dim` is at least 0 whatever the sizes (each at least 1). Where no term but
    the constant has a negative coefficient, its least value is at sizes 1 (`2 * E - 1`
    holds); otherwise the answer is no (a sufficient test: `T * T - T` fails it)."""
    terms = _terms(dim)
    if any(c < 0 for m, c in terms.items() if m):
        return False
    return sum(terms.values()) >= 0


def product(dims: Iterable[Dim]) -> Dim:
    """The product of `dims` (1 for none): the element count of a shape."""
    return functools.reduce(multiply, dims, 1)


def value(dim: Dim, sizes: Mapping[str, int]) -> int:
    """The extent for the given values of the size variables."""
    return sum(c * functools.reduce(operator.mul, (sizes[v] for v in m), 1)
               for m, c in _terms(dim).items())


def cpp(dim: Dim, sizes: Mapping[str, str]) -> str:
    """A C++ expression of the extent, with `sizes` naming each variable's expression."""
    if isinstance(dim, int):
        return str(dim)
    if isinstance(dim, str):
        return sizes[dim]
    terms = [" * ".join(([f"int64_t{{{c}}}"] if c != 1 or not m else [])
                        + [sizes[v] for v in m]) for m, c in dim.terms]
    return "(" + " + ".join(terms) + ")"
