"""Typing of the non-element-wise calls inside expressions: reductions, dropout, norms."""

from __future__ import annotations

from parafuse.grammar import ccn_ast as ast
from parafuse.grammar.diagnostics import CompileError

from . import dims, ir
from .layout_rules import (
    LayoutConflict,
    as_sliced_layout,
    reshaped_layout,
    row_function_layout,
    sliced_range_layout,
    transposed_layout,
)
from .literals import is_literal, literal_value
from .types import LOCAL, Dim, Layout, ValueType, is_float, is_int, shape_text


def reduction_layout(operand: Layout) -> Layout:
    """Sliced and replicated operands reduce to a replicated scalar, local ones to a local one."""
    if operand.kind == "local":
        return LOCAL
    return Layout("replicated", None, operand.group)


def check_reduction(node: ast.Call, operand: ir.Expr) -> ir.Expr:
    kind = node.function.name
    dtype = operand.type.dtype
    if dtype == "bool":
        raise CompileError(f"{kind}() of a bool value", operand.location,
                           hint="cast(x, f32) first")
    if kind == "sum" and is_int(dtype):
        dtype = "i64"
    elif kind == "norm" and is_int(dtype):
        dtype = "f32"
    vt = ValueType(dtype, (), reduction_layout(operand.type.layout))
    cross = operand.type.layout.kind == "sliced"
    return ir.Reduce(kind, operand, cross, vt, node.location)


def _require_replicated_scalar(value: ir.Expr, what: str) -> None:
    if value.type.shape != () or not value.type.layout.is_world_replicated:
        raise CompileError(f"{what} must be a replicated scalar (a param or a literal), got "
                           f"{value.type}", value.location)
    if value.type.dtype == "bool":
        raise CompileError(f"{what} must be a number, got bool", value.location)


def check_dropout(node: ast.Call, x: ir.Expr, p: ir.Expr, site: int) -> ir.Expr:
    if not is_float(x.type.dtype):
        raise CompileError(f"dropout() needs a floating-point tensor, got {x.type.dtype}",
                           x.location, hint="cast(x, f32) first")
    _require_replicated_scalar(p, "the dropout probability")
    if is_literal(p) and not 0 <= literal_value(p) <= 1:
        raise CompileError(f"the dropout probability must be from 0 to 1, not "
                           f"{literal_value(p):g}", p.location)
    p = ir.Const(p.value, ValueType("f32", (), p.type.layout), p.location) \
        if isinstance(p, ir.Const) else p
    return ir.Dropout(x, p, site, x.type, node.location)


def _check_rows_operand(kind: str, x: ir.Expr) -> None:
    """A function of rows takes a floating-point operand of one dim or more."""
    if not is_float(x.type.dtype) or not x.type.shape:
        raise CompileError(f"{kind}() needs a floating-point tensor with at least one dim, got "
                           f"{x.type}", x.location)


def _row_layout(kind: str, x: ir.Expr, dim: int) -> Layout:
    """The layout of a function of each row along `dim` (checked operand first)."""
    _check_rows_operand(kind, x)
    try:
        return row_function_layout(kind, x.type.layout, dim)
    except LayoutConflict as conflict:
        raise CompileError(conflict.message, x.location, hint=conflict.hint) from None


def _check_last_dim(kind: str, x: ir.Expr, dim: ast.Expr) -> None:
    """The dim argument of a row function: the last, written -1 or as its index."""
    rank = len(x.type.shape)
    number = dim.operand if isinstance(dim, ast.Negate) else dim
    value = None
    if isinstance(number, ast.Number) and number.is_integer:
        value = -number.value if isinstance(dim, ast.Negate) else number.value
    if value not in (-1, rank - 1):
        raise CompileError(f"{kind}() works over the last dim: write -1 (or "
                           f"{rank - 1}, the last of {shape_text(x.type.shape)})",
                           dim.location, hint="transpose(x, d, -1) brings dim d last")


def check_softmax(node: ast.Call, x: ir.Expr, dim: ast.Expr) -> ir.Expr:
    """softmax(x, dim): over the last dim, written -1 or as its index."""
    last = len(x.type.shape) - 1
    layout = _row_layout("softmax", x, last)
    _check_last_dim("softmax", x, dim)
    return ir.RowFunction("softmax", x, None, ValueType(x.type.dtype, x.type.shape, layout),
                          node.location, last)


def check_row_reduction(node: ast.Call, x: ir.Expr, dim: ast.Expr) -> ir.Expr:
    """sum / amax / mean (x, d): each row along dim d reduced to one element, the dim kept
    with extent 1 so that the result broadcasts against x (`x - amax(x, -1)`)."""
    kind = node.function.name
    _check_rows_operand(kind, x)  # before its dim, which a scalar has none of
    d = _dim_index(kind, x, dim)
    shape = x.type.shape[:d] + (1,) + x.type.shape[d + 1:]
    vt = ValueType(x.type.dtype, shape, _row_layout(kind, x, d))
    return ir.RowFunction(kind, x, None, vt, node.location, d)


def _dim_index(kind: str, x: ir.Expr, dim: ast.Expr) -> int:
    """A dim argument: an integer literal, negative from the end, within x's dims."""
    rank = len(x.type.shape)
    number = dim.operand if isinstance(dim, ast.Negate) else dim
    if not (isinstance(number, ast.Number) and number.is_integer):
        raise CompileError(f"{kind}() takes its dims as integer literals", dim.location,
                           hint=f"dims of {shape_text(x.type.shape)}: 0 to {rank - 1}, or -1 "
                           "for the last")
    value = -number.value if isinstance(dim, ast.Negate) else number.value
    if not -rank <= value < rank:
        raise CompileError(f"{kind}() has no dim {value}: {x.type} has {rank} dim"
                           f"{'s' if rank != 1 else ''}", dim.location)
    return value % rank


def check_transpose(node: ast.Call, x: ir.Expr, d0: ast.Expr, d1: ast.Expr) -> ir.Expr:
    """transpose(x, d0, d1): dims d0 and d1 swapped, as torch.transpose."""
    if x.type.dtype == "bool" or len(x.type.shape) < 2:
        raise CompileError(f"transpose() needs a numeric tensor of two dims or more, got "
                           f"{x.type}", x.location, hint="cast(x, f32) first"
                           if x.type.dtype == "bool" else None)
    dims = sorted((_dim_index("transpose", x, d0), _dim_index("transpose", x, d1)))
    if dims[0] == dims[1]:
        raise CompileError("transpose() needs two different dims", node.location,
                           hint="transpose(x, -2, -1) swaps the last two")
    first, second = dims
    shape = list(x.type.shape)
    shape[first], shape[second] = shape[second], shape[first]
    vt = ValueType(x.type.dtype, tuple(shape), transposed_layout(x.type.layout, (first, second)))
    return ir.Transpose(x, (first, second), vt, node.location)


def check_row_norm(node: ast.Call, x: ir.Expr, eps: ir.Expr) -> ir.Expr:
    kind = node.function.name
    last = len(x.type.shape) - 1
    layout = _row_layout(kind, x, last)
    _require_replicated_scalar(eps, f"the {kind} epsilon")
    if isinstance(eps, ir.Const):
        eps = ir.Const(eps.value, ValueType("f32", (), eps.type.layout), eps.location)
    return ir.RowFunction(kind, x, eps, ValueType(x.type.dtype, x.type.shape, layout),
                          node.location, last)


def check_slice(node: ast.Call, x: ir.Expr, dim: ast.Expr, start: Dim, stop: Dim) -> ir.Expr:
    """slice(x, d, start, stop): indices [start, stop) along dim d, as x[..., start:stop]."""
    if x.type.dtype == "bool" or not x.type.shape:
        raise CompileError(f"slice() needs a numeric tensor with at least one dim, got {x.type}",
                           x.location, hint="cast(x, f32) first"
                           if x.type.dtype == "bool" else None)
    d = _dim_index("slice", x, dim)
    length, extent = dims.subtract(stop, start), x.type.shape[d]
    if not dims.never_negative(dims.subtract(length, 1)):
        raise CompileError(f"slice() needs start < stop whatever the sizes: [{start}, {stop}) "
                           "may be empty", node.location,
                           hint="write stop as start plus the length (slice(x, d, E, 2 * E))")
    if not dims.never_negative(dims.subtract(extent, stop)):
        raise CompileError(f"slice() ends at {stop}, which may be past dim {d} of "
                           f"{shape_text(x.type.shape)}", node.location,
                           hint=f"stop at most at the dim's extent, {extent}")
    try:
        layout = sliced_range_layout(x.type.layout, d)
    except LayoutConflict as conflict:
        raise CompileError(conflict.message, x.location, hint=conflict.hint) from None
    shape = x.type.shape[:d] + (length,) + x.type.shape[d + 1:]
    return ir.Slice(x, d, start, ValueType(x.type.dtype, shape, layout), node.location)


def check_as_sliced(node: ast.Call, x: ir.Expr, dim: ast.Expr,
                    placement: ir.Placement | None) -> ir.Expr:
    """as_sliced(x, d): each rank keeps the block along d that sliced(d) gives it, of its
    own value of x; inside an `on G[k]` block the block's ranks split it."""
    if x.type.dtype == "bool" or not x.type.shape:
        raise CompileError(f"as_sliced() needs a numeric tensor with at least one dim, got "
                           f"{x.type}", x.location, hint="cast(x, f32) first"
                           if x.type.dtype == "bool" else None)
    d = _dim_index("as_sliced", x, dim)
    try:
        layout = as_sliced_layout(x.type.layout, d, placement.group if placement else None)
    except LayoutConflict as conflict:
        raise CompileError(conflict.message, x.location, hint=conflict.hint) from None
    return ir.AsSliced(x, d, ValueType(x.type.dtype, x.type.shape, layout), node.location)


def check_reshape(node: ast.Call, x: ir.Expr, shape: tuple[Dim, ...]) -> ir.Expr:
    """reshape(x, d0, d1, ...): the same elements in row-major order, another shape."""
    if x.type.dtype == "bool":
        raise CompileError("reshape() of a bool value", x.location, hint="cast(x, f32) first")
    old = x.type.shape
    if dims.product(old) != dims.product(shape):
        raise CompileError(f"reshape() must keep the number of elements: {shape_text(old)} has "
                           f"{dims.product(old)} elements, {shape_text(shape)} has "
                           f"{dims.product(shape)}", node.location,
                           hint=f"the new extents must multiply to {dims.product(old)}")
    try:
        layout = reshaped_layout(x.type.layout, old, shape)
    except LayoutConflict as conflict:
        raise CompileError(conflict.message, x.location, hint=conflict.hint) from None
    return ir.Reshape(x, ValueType(x.type.dtype, shape, layout), node.location)
