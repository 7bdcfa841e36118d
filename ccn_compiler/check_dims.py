"""Extents as written in shapes and `reshape()`: integers, size variables, and sums and
products of them (docs/ccn-language.md, "Shape expressions")."""

from __future__ import annotations

from parafuse.grammar import ccn_ast as ast
from parafuse.grammar.diagnostics import CompileError

from . import dims
from .scope import Scope, did_you_mean
from .types import Dim

_COMBINE = {"+": dims.add, "*": dims.multiply}


def shape_dim(expr: ast.Expr, scope: Scope, zero: bool = False) -> Dim:
    """The canonical extent `expr` writes (`zero`: the literal 0 too, as a start);
    one located error for anything else."""
    if isinstance(expr, ast.NameRef):
        binding = scope.bindings.get(expr.name)
        if binding is not None and binding.role != "size":
            raise CompileError(f"'{expr.name}' is a {binding.role}, not a size variable",
                               expr.location, hint="extents are integers and the size variables of "
                               f"program {scope.program}(...)")
        if binding is None:
            sizes = [n for n, b in scope.bindings.items() if b.role == "size"]
            raise CompileError(f"unknown size variable '{expr.name}'", expr.location,
                               hint=did_you_mean(expr.name, sizes) or
                               f"declare it: program {scope.program}(..., {expr.name})")
        return expr.name
    if isinstance(expr, ast.Number):
        if not expr.is_integer or int(expr.text) < (0 if zero else 1):
            raise CompileError(f"dimension '{expr.text}' must be a positive integer or a size "
                               "variable", expr.location)
        return int(expr.text)
    if isinstance(expr, ast.Binary) and expr.op in _COMBINE:
        return _COMBINE[expr.op](shape_dim(expr.left, scope, zero),
                                 shape_dim(expr.right, scope, zero))
    raise CompileError("an extent is a positive integer, a size variable, or a sum or "
                       "product of them", expr.location,
                       hint="write it with + and * (3 * H * Dh, T + 1)")
