"""Literals in checked expressions: a constant, negated any number of times."""

from __future__ import annotations

from . import ir


def is_literal(expr: ir.Expr) -> bool:
    return isinstance(expr, ir.Const) or (isinstance(expr, ir.Unary) and is_literal(expr.operand))


def literal_value(expr: ir.Expr) -> int | float:
    """The number a literal stands for."""
    return expr.value if isinstance(expr, ir.Const) else -literal_value(expr.operand)
