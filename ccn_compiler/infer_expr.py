"""Type, shape and layout inference for element-wise expressions (docs/ccn-language.md sections
4-6).

`check_expr` turns an AST expression into a typed IR expression or raises a
located CompileError that names the dtypes, shapes or layouts involved.
"""

from __future__ import annotations

from parafuse.grammar import ccn_ast as ast
from parafuse.grammar.diagnostics import CompileError, Location

from . import ir
from .check_dims import shape_dim
from .layout_rules import LayoutConflict, join_all
from .literals import is_literal, literal_value
from .numerics import dtype_range, fits_dtype
from .scope import (
    COLLECTIVES,
    ELEMENTWISE_BINARY,
    ELEMENTWISE_UNARY,
    REDUCTIONS,
    ROW_FUNCTIONS,
    ROW_NORMS,
    Scope,
    did_you_mean,
)
from .special_calls import (
    check_as_sliced,
    check_dropout,
    check_reduction,
    check_reshape,
    check_row_norm,
    check_row_reduction,
    check_slice,
    check_softmax,
    check_transpose,
)
from .types import ALL_DTYPES, REPLICATED, ValueType, is_float, is_int, promote, shape_text

INT_PRESERVING = ("abs", "relu")


def literal_type(number: ast.Number) -> ValueType:
    return ValueType("i32" if number.is_integer else "f32", (), REPLICATED)


def check_literal_fits(expr: ir.Expr, dtype: str) -> None:
    """A literal too large for the dtype it takes is an error, not a wrapped integer or an
    infinity (as for a param's default: docs/ccn-language.md section 3)."""
    if not fits_dtype(literal_value(expr), dtype):
        raise CompileError(f"this number does not fit {dtype}", expr.location,
                           hint=f"{dtype} holds {dtype_range(dtype)}")


def retype_literal(expr: ir.Expr, dtype: str) -> ir.Expr:
    check_literal_fits(expr, dtype)  # the whole literal: -2147483648 fits i32
    return _retyped(expr, dtype)


def _retyped(expr: ir.Expr, dtype: str) -> ir.Expr:
    vt = ValueType(dtype, (), REPLICATED)
    if isinstance(expr, ir.Const):
        return ir.Const(expr.value, vt, expr.location)
    assert isinstance(expr, ir.Unary)
    return ir.Unary(expr.op, _retyped(expr.operand, dtype), vt, expr.location)


def broadcast_shape(types: list[ValueType], location: Location) -> tuple:
    """Shapes align from the right; an operand with fewer dims broadcasts over leading dims,
    and a dim of extent 1 (the literal `1`) over the other operand's dim."""
    result: tuple = ()
    for vt in types:
        longer, shorter = (vt.shape, result) if len(vt.shape) >= len(result) else (result, vt.shape)
        tail = longer[len(longer) - len(shorter):]
        if any(a != b and 1 not in (a, b) for a, b in zip(tail, shorter, strict=True)):
            listed = " and ".join(shape_text(t.shape) for t in types if t.shape)
            raise CompileError(f"shape mismatch: {listed} do not align from the right", location,
                               hint="operands must have equal trailing dims (or 1); scalars "
                               "broadcast")
        result = longer[:len(longer) - len(shorter)] + tuple(
            b if a == 1 else a for a, b in zip(tail, shorter, strict=True))
    return result


def unify_numeric(args: list[ir.Expr], location: Location, what: str) -> list[ir.Expr]:
    """Give literals the dtype of the other operands; reject bool arithmetic."""
    for arg in args:
        if arg.type.dtype == "bool":
            raise CompileError(f"{what} on a bool value", arg.location,
                               hint="use where(cond, a, b) or cast(x, f32) first")
    typed = [a.type.dtype for a in args if not is_literal(a)]
    if not typed:
        return args
    target = typed[0]
    for dtype in typed[1:]:
        target = promote(target, dtype)
    out = []
    for arg in args:
        if is_literal(arg):
            lit = arg.type.dtype
            out.append(retype_literal(arg, "f32" if is_int(target) and is_float(lit) else target))
        else:
            out.append(arg)
    return out


def result_type(args: list[ir.Expr], dtype: str, location: Location) -> ValueType:
    types = [a.type for a in args]
    shape = broadcast_shape(types, location)
    try:
        layout = join_all(types, shape)
    except LayoutConflict as conflict:
        listed = ", ".join(f"{_describe(a)}: {a.type}" for a in args if not is_literal(a))
        raise CompileError(f"{conflict.message} ({listed})", location,
                           hint=conflict.hint) from None
    return ValueType(dtype, shape, layout)


def _describe(expr: ir.Expr) -> str:
    return f"'{expr.name}'" if isinstance(expr, ir.Ref) else "operand"


def _arith_dtype(dtypes: list[str]) -> str:
    result = dtypes[0]
    for dtype in dtypes[1:]:
        result = promote(result, dtype)
    return result


def check_binary(node: ast.Binary, scope: Scope) -> ir.Expr:
    left, right = check_expr(node.left, scope), check_expr(node.right, scope)
    if node.op in ("==", "!=") and left.type.dtype == right.type.dtype == "bool":
        return ir.Binary(node.op, left, right, result_type([left, right], "bool", node.location),
                         node.location)
    left, right = unify_numeric([left, right], node.op_location, f"'{node.op}'")
    dtype = _arith_dtype([left.type.dtype, right.type.dtype])
    if node.op in ("<", "<=", ">", ">=", "==", "!="):
        dtype = "bool"
    elif node.op == "/" and is_int(dtype):
        dtype = "f32"
    return ir.Binary(node.op, left, right, result_type([left, right], dtype, node.location),
                     node.location)


def check_negate(node: ast.Negate, scope: Scope) -> ir.Expr:
    operand = unify_numeric([check_expr(node.operand, scope)], node.location, "'-'")[0]
    return ir.Unary("neg", operand, operand.type, node.location)


def check_name(node: ast.NameRef, scope: Scope) -> ir.Expr:
    binding = scope.lookup(node.name, node.location)
    if binding.role == "size":
        raise CompileError(f"'{node.name}' is a size variable, not a value", node.location)
    if binding.role == "group":
        raise CompileError(f"'{node.name}' is a group; groups appear only in `in {node.name}` "
                           "and in send", node.location)
    return ir.Ref(node.name, binding.type, node.location)


def positional(node: ast.Call, count: int, usage: str) -> list[ast.Expr]:
    args = node.arguments
    bad = next((a for a in args if not isinstance(a, (ast.Number, ast.NameRef, ast.Negate,
                                                      ast.Binary, ast.Call))), None)
    if bad is not None:
        raise CompileError(f"{node.function.name}() does not take this argument", bad.location,
                           hint=f"usage: {usage}")
    if len(args) != count:
        raise CompileError(f"{node.function.name}() takes {count} argument"
                           f"{'s' if count != 1 else ''}, got {len(args)}", node.location,
                           hint=f"usage: {usage}")
    return list(args)


def check_math(node: ast.Call, scope: Scope) -> ir.Expr:
    name = node.function.name
    arity = 1 if name in ELEMENTWISE_UNARY else 2
    usage = f"{name}(x)" if arity == 1 else f"{name}(a, b)"
    args = [check_expr(a, scope) for a in positional(node, arity, usage)]
    args = unify_numeric(args, node.location, f"{name}()")
    dtype = _arith_dtype([a.type.dtype for a in args])
    if arity == 1 and is_int(dtype) and name not in INT_PRESERVING:
        dtype = "f32"
    return ir.Func(name, tuple(args), result_type(args, dtype, node.location), node.location)


def check_where(node: ast.Call, scope: Scope) -> ir.Expr:
    cond, a, b = (check_expr(x, scope) for x in positional(node, 3, "where(cond, a, b)"))
    if cond.type.dtype != "bool":
        raise CompileError(f"where() needs a bool condition, got {cond.type.dtype}",
                           cond.location, hint="write a comparison such as x > 0")
    a, b = unify_numeric([a, b], node.location, "where()")
    dtype = _arith_dtype([a.type.dtype, b.type.dtype])
    vt = result_type([cond, a, b], dtype, node.location)
    return ir.Func("where", (cond, a, b), vt, node.location)


def check_cast(node: ast.Call, scope: Scope) -> ir.Expr:
    value, dtype_arg = positional(node, 2, "cast(x, DTYPE)")
    if not isinstance(dtype_arg, ast.NameRef) or dtype_arg.name not in ALL_DTYPES:
        text = dtype_arg.name if isinstance(dtype_arg, ast.NameRef) else "this"
        raise CompileError(f"unknown dtype '{text}' in cast()", dtype_arg.location,
                           hint=did_you_mean(text, list(ALL_DTYPES)) or
                           "dtypes: " + ", ".join(ALL_DTYPES))
    operand = check_expr(value, scope)
    vt = ValueType(dtype_arg.name, operand.type.shape, operand.type.layout)
    return ir.Cast(operand, vt, node.location)


def check_call(node: ast.Call, scope: Scope) -> ir.Expr:
    name = node.function.name
    if name in ELEMENTWISE_UNARY or name in ELEMENTWISE_BINARY:
        return check_math(node, scope)
    handlers = {"where": check_where, "cast": check_cast}
    if name in handlers:
        return handlers[name](node, scope)
    if name in ir.ROW_REDUCTIONS and (len(node.arguments) > 1 or name == "mean"):
        whole = f"{name}(x) (the whole tensor) or " if name in REDUCTIONS else ""
        x, dim = positional(node, 2, f"{whole}{name}(x, -1) (each row)")
        return check_row_reduction(node, check_expr(x, scope), dim)
    if name in REDUCTIONS:
        return check_reduction(node, check_expr(positional(node, 1, f"{name}(x)")[0], scope))
    if name == "dropout":
        x, p = (check_expr(a, scope) for a in positional(node, 2, "dropout(x, p)"))
        return check_dropout(node, x, p, scope.next_dropout_site())
    if name in ROW_NORMS:
        x, eps = (check_expr(a, scope) for a in positional(node, 2, f"{name}(x, eps)"))
        return check_row_norm(node, x, eps)
    if name == "transpose":
        x, d0, d1 = positional(node, 3, "transpose(x, d0, d1)")
        return check_transpose(node, check_expr(x, scope), d0, d1)
    if name == "reshape":
        x, *extents = positional(node, max(2, len(node.arguments)), "reshape(x, d0, d1, ...)")
        return check_reshape(node, check_expr(x, scope),
                             tuple(shape_dim(e, scope) for e in extents))
    if name == "slice":
        x, dim, start, stop = positional(node, 4, "slice(x, dim, start, stop)")
        return check_slice(node, check_expr(x, scope), dim, shape_dim(start, scope, zero=True),
                           shape_dim(stop, scope))
    if name == "as_sliced":
        x, dim = positional(node, 2, "as_sliced(x, dim)")
        return check_as_sliced(node, check_expr(x, scope), dim, scope.placement)
    if name == "softmax":
        x, dim = positional(node, 2, "softmax(x, dim)")
        return check_softmax(node, check_expr(x, scope), dim)
    if name in COLLECTIVES or name in ("matmul", "update"):
        raise CompileError(f"{name}() must be the outermost call of its statement", node.location,
                           hint=f"bind it to a name first: t = {name}(...)")
    known = list(ELEMENTWISE_UNARY + ELEMENTWISE_BINARY + REDUCTIONS + ROW_FUNCTIONS
                 + COLLECTIVES + ("where", "cast", "dropout", "transpose", "reshape", "slice",
                                  "as_sliced", "matmul", "update"))
    raise CompileError(f"unknown function '{name}'", node.function.location,
                       hint=did_you_mean(name, known))


def check_expr(node: ast.Expr, scope: Scope) -> ir.Expr:
    if isinstance(node, ast.Number):
        const = ir.Const(node.value, literal_type(node), node.location)
        check_literal_fits(const, "i64" if node.is_integer else "f64")  # the widest first
        return const
    if isinstance(node, ast.NameRef):
        return check_name(node, scope)
    if isinstance(node, ast.Negate):
        return check_negate(node, scope)
    if isinstance(node, ast.Binary):
        return check_binary(node, scope)
    return check_call(node, scope)
