"""Print typed .ccn IR expressions as C++ expressions.

Every node is printed in its compute type (float for f16/bf16, docs/ccn-language.md section 4), with
casts only where a child's compute type differs, and with parentheses from a
precedence table so that the output stays readable. How a leaf is read (which
element of which buffer) and how a result is stored are the caller's business:
`ExprContext.read` and `ExprContext.store`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.types import compute_dtype, promote

STORAGE = {"f16": "pf::f16", "bf16": "pf::bf16", "f32": "float", "f64": "double",
           "i32": "int32_t", "i64": "int64_t", "bool": "uint8_t"}
COMPUTE = {"f16": "float", "bf16": "float", "f32": "float", "f64": "double",
           "i32": "int32_t", "i64": "int64_t", "bool": "bool"}
DTYPE_ENUM = {"f16": "pf::DType::f16", "bf16": "pf::DType::bf16", "f32": "pf::DType::f32",
              "f64": "pf::DType::f64", "i32": "pf::DType::i32", "i64": "pf::DType::i64",
              "bool": "pf::DType::b8"}
CPP_PRECEDENCE = {"?:": 1, "==": 2, "!=": 2, "<": 3, "<=": 3, ">": 3, ">=": 3,
                  "+": 4, "-": 4, "*": 5, "/": 5, "unary": 6, "atom": 7}
FUNCTIONS = {"sqrt": "std::sqrt", "exp": "std::exp", "log": "std::log", "tanh": "std::tanh",
             "rsqrt": "pf::rsqrt", "gelu": "pf::gelu", "sigmoid": "pf::sigmoid",
             "relu": "pf::relu", "abs": "pf::absolute", "max": "pf::maximum",
             "min": "pf::minimum", "pow": "pf::power"}


def compute_type(dtype: str) -> str:
    return COMPUTE[compute_dtype(dtype)] if dtype != "bool" else "bool"


def literal(value: float | int, dtype: str) -> str:
    """A C++ literal of `value` in `dtype`'s compute type, rounded as numpy rounds it."""
    ctype = compute_type(dtype)
    if ctype in ("int32_t", "int64_t"):
        return f"{ctype}({int(value)})"
    if ctype == "bool":
        return "true" if value else "false"
    text = repr(float(value))
    if text in ("inf", "-inf", "nan"):
        text = {"inf": "INFINITY", "-inf": "-INFINITY", "nan": "NAN"}[text]
    return f"{ctype}({text})" if ctype == "float" else text


@dataclass
class ExprContext:
    read: Callable[[ir.Ref], str]  # code reading a leaf, in the leaf's compute type
    precomputed: dict[int, str]  # id(node) -> code of a value computed before the loop
    dropout_index: Callable[[ir.Dropout], str]  # logical index of the current element
    dropout_rank: Callable[[ir.Dropout], str]
    store: Callable[[str, str, str], str]  # (buffer, storage type, value) -> a statement
    seed_step: str = "seed_step"


def _paren(code: str, prec: int, needed: int) -> str:
    return f"({code})" if prec < needed else code


def _as(code: str, prec: int, have: str, want: str) -> tuple[str, int]:
    if have == want:
        return code, prec
    return f"static_cast<{want}>({code})", CPP_PRECEDENCE["atom"]


def cpp_expr(node: ir.Expr, ctx: ExprContext) -> tuple[str, int]:
    """(C++ code, precedence) of `node` in its compute type."""
    if id(node) in ctx.precomputed:
        return ctx.precomputed[id(node)], CPP_PRECEDENCE["atom"]
    if isinstance(node, ir.Const):
        return literal(node.value, node.type.dtype), CPP_PRECEDENCE["atom"]
    if isinstance(node, ir.Ref):
        return ctx.read(node), CPP_PRECEDENCE["atom"]
    if isinstance(node, ir.Unary):
        code, prec = typed(node.operand, ctx, compute_type(node.type.dtype))
        return "-" + _paren(code, prec, CPP_PRECEDENCE["unary"]), CPP_PRECEDENCE["unary"]
    if isinstance(node, ir.Binary):
        return _binary(node, ctx)
    if isinstance(node, ir.Cast):
        return _cast(node, ctx)
    if isinstance(node, ir.Func):
        return _func(node, ctx)
    if isinstance(node, ir.Dropout):
        return _dropout(node, ctx)
    raise AssertionError(f"{type(node).__name__} must be computed before the loop")


def typed(node: ir.Expr, ctx: ExprContext, want: str) -> tuple[str, int]:
    code, prec = cpp_expr(node, ctx)
    return _as(code, prec, compute_type(node.type.dtype), want)


def _binary(node: ir.Binary, ctx: ExprContext) -> tuple[str, int]:
    if node.type.dtype == "bool":
        dl, dr = node.left.type.dtype, node.right.type.dtype
        work = "bool" if dl == dr == "bool" else compute_type(dl if dl == dr else promote(dl, dr))
    else:
        work = compute_type(node.type.dtype)
    prec = CPP_PRECEDENCE[node.op]
    left, lp = typed(node.left, ctx, work)
    right, rp = typed(node.right, ctx, work)
    return f"{_paren(left, lp, prec)} {node.op} {_paren(right, rp, prec + 1)}", prec


def _cast(node: ir.Cast, ctx: ExprContext) -> tuple[str, int]:
    code, _ = cpp_expr(node.operand, ctx)
    if node.type.dtype == "bool":
        return f"({code} != 0)", CPP_PRECEDENCE["atom"]
    return f"pf::round_to<{STORAGE[node.type.dtype]}>({code})", CPP_PRECEDENCE["atom"]


def _func(node: ir.Func, ctx: ExprContext) -> tuple[str, int]:
    ctype = compute_type(node.type.dtype)
    if node.name == "where":
        cond, cp = cpp_expr(node.args[0], ctx)
        a, ap = typed(node.args[1], ctx, ctype)
        b, bp = typed(node.args[2], ctx, ctype)
        return (f"{_paren(cond, cp, 2)} ? {_paren(a, ap, 2)} : {_paren(b, bp, 2)}",
                CPP_PRECEDENCE["?:"])
    args = ", ".join(typed(a, ctx, ctype)[0] for a in node.args)
    name = FUNCTIONS[node.name]
    if name.startswith("pf::"):
        name = f"{name}<{ctype}>"
    return f"{name}({args})", CPP_PRECEDENCE["atom"]


def _dropout(node: ir.Dropout, ctx: ExprContext) -> tuple[str, int]:
    dtype = node.type.dtype
    x, _ = cpp_expr(node.operand, ctx)
    p, _ = typed(node.p, ctx, "float")
    rounded = f"pf::round_to<{STORAGE[dtype]}>({x})"
    kept = (f"pf::dropout_element({rounded}, {p}, {ctx.dropout_index(node)}, "
            f"{ctx.dropout_rank(node)}, {node.site}u, {ctx.seed_step})")
    return f"pf::round_to<{STORAGE[dtype]}>({kept})", CPP_PRECEDENCE["atom"]
