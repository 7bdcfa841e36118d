"""Typing of the stages that must be outermost: collectives, matmul and update."""

from __future__ import annotations

from parafuse.grammar import ccn_ast as ast
from parafuse.grammar.diagnostics import CompileError, Note

from . import ir
from .check_placement import collective_group
from .infer_expr import check_expr, positional
from .layout_rules import LayoutConflict, aligned_dim, matmul_layout
from .scope import REDUCE_OPS, Scope, did_you_mean
from .types import Layout, ValueType, is_float, is_int, promote, shape_text, sliced

COLLECTIVE_USAGE = {
    "allreduce": "allreduce(OP, x [, in G])",
    "reducescatter": "reducescatter(OP, x [, in G])",
    "allgather": "allgather(x [, in G])",
    "broadcast": "broadcast(x, ROOT [, in G])",
    "send": "send(x, G, SHIFT)",
}


def _split_group(node: ast.Call, scope: Scope) -> tuple[list, str | None]:
    """Remove a trailing `in G` argument; return the others and G."""
    args = list(node.arguments)
    for arg in args[:-1]:
        if isinstance(arg, ast.InGroup):
            raise CompileError("`in G` must be the last argument", arg.location)
    if args and isinstance(args[-1], ast.InGroup):
        group = args.pop().group
        _require_group(group.name, group.location, scope)
        return args, group.name
    return args, None


def _require_group(name: str, location, scope: Scope) -> None:
    if name not in scope.groups:
        raise CompileError(f"unknown group '{name}'", location,
                           hint=did_you_mean(name, list(scope.groups)) or
                           f"declare it: group {name} = blocks(K)")


def _reduce_op(arg: ast.Expr) -> str:
    if not isinstance(arg, ast.NameRef) or arg.name not in REDUCE_OPS:
        raise CompileError("expected a reduction op", arg.location,
                           hint="one of: " + ", ".join(REDUCE_OPS))
    return arg.name


def _integer_literal(arg: ast.Expr, what: str, signed: bool) -> int:
    negative = isinstance(arg, ast.Negate) and signed
    number = arg.operand if negative else arg
    if not isinstance(number, ast.Number) or not number.is_integer:
        raise CompileError(f"{what} must be an integer literal", arg.location)
    return -number.value if negative else number.value


def _finer(inner: str | None, outer: str | None, scope: Scope) -> bool:
    """Is every block of group `inner` inside one block of group `outer` (None = world)?"""
    if inner is None:
        return False
    k_inner = scope.groups[inner].blocks
    k_outer = 1 if outer is None else scope.groups[outer].blocks
    return k_inner > k_outer and k_inner % k_outer == 0


def _wrong_layout(op: str, wanted: str, x: ir.Expr, hint: str | None = None):
    return CompileError(f"{op} needs {wanted}, but its operand is {x.type}", x.location,
                        hint=hint)


def check_collective(name: str, node: ast.Call, scope: Scope) -> ir.CollectiveStage:
    op = node.function.name
    args, group = _split_group(node, scope)
    group = collective_group(op, group, node, scope)
    usage = COLLECTIVE_USAGE[op]
    bare = ast.Call(node.function, tuple(args), node.location)
    extra: dict = {"group": group}
    if op in ("allreduce", "reducescatter"):
        op_arg, x_arg = positional(bare, 2, usage)
        extra["reduce_op"] = _reduce_op(op_arg)
    elif op == "allgather":
        (x_arg,) = positional(bare, 1, usage)
    elif op == "broadcast":
        x_arg, root_arg = positional(bare, 2, usage)
        extra["root"] = _integer_literal(root_arg, "the broadcast root", signed=False)
    else:
        if group is not None:
            raise CompileError("send takes its group as the second argument, not `in G`",
                               node.location, hint=f"usage: {usage}")
        x_arg, group_arg, shift_arg = positional(bare, 3, usage)
        if not isinstance(group_arg, ast.NameRef):
            raise CompileError("send needs a group name as its second argument",
                               group_arg.location)
        _require_group(group_arg.name, group_arg.location, scope)
        extra["group"] = group_arg.name
        extra["shift"] = _integer_literal(shift_arg, "the send shift", signed=True)
    x = check_expr(x_arg, scope)
    if x.type.dtype == "bool":
        raise CompileError(f"{op} of a bool value", x.location, hint="cast(x, f32) first")
    if extra.get("reduce_op") == "avg" and is_int(x.type.dtype):
        raise CompileError("avg of integers is not defined", node.arguments[0].location,
                           hint="use sum, or cast(x, f32) first")
    vt = ValueType(x.type.dtype, x.type.shape, _collective_layout(op, x, extra["group"], scope))
    return ir.CollectiveStage(name, op, x, vt, node.location, **extra)


def _collective_layout(op: str, x: ir.Expr, group: str | None, scope: Scope) -> Layout:
    lay = x.type.layout
    in_g = f" in {group}" if group else ""
    if op == "allreduce":
        if lay.kind == "local" or (lay.kind == "replicated" and _finer(lay.group, group, scope)):
            return Layout("replicated", None, group)
        hint = ("the value is already identical on every rank; no allreduce is needed"
                if lay.kind == "replicated" else "use allgather to assemble a sliced value")
        raise _wrong_layout("allreduce", "a local value (or one replicated in a smaller group)",
                            x, hint)
    if op == "reducescatter":
        if lay.kind != "local" or x.type.is_scalar:
            raise _wrong_layout("reducescatter", "a local tensor", x)
        return sliced(0, group)
    if op == "allgather":
        if lay.kind != "sliced":
            raise _wrong_layout("allgather", "a sliced value", x)
        if lay.group != group:
            want = f"in {lay.group}" if lay.group else "without `in`"
            raise _wrong_layout(f"allgather{in_g}", f"a value sliced{in_g}", x,
                                f"this value is {lay}: gather it {want}")
        return Layout("replicated", None, group)
    if op == "broadcast":
        if lay.kind != "local":
            raise _wrong_layout("broadcast", "a local value", x)
        return Layout("replicated", None, group)
    if lay.kind == "sliced" and lay.group != group:
        raise _wrong_layout("send", f"a replicated or local value (or one sliced in {group})",
                            x, "allgather it first")
    return lay


def check_matmul(name: str, node: ast.Call, scope: Scope) -> ir.MatmulStage:
    a, b = (check_expr(x, scope) for x in positional(node, 2, "matmul(a, b)"))
    for operand in (a, b):
        if not is_float(operand.type.dtype):
            raise CompileError(f"matmul needs floating-point operands, got {operand.type}",
                               operand.location)
    shape = (_batched_shape(a.type, b.type, node) if len(b.type.shape) > 2
             else _matmul_shape(a.type, b.type, node))
    try:
        layout = matmul_layout(a.type, b.type)
    except LayoutConflict as conflict:
        raise CompileError(conflict.message, node.location, hint=conflict.hint) from None
    vt = ValueType(promote(a.type.dtype, b.type.dtype), shape, layout)
    return ir.MatmulStage(name, a, b, vt, node.location)


def _matmul_shape(a: ValueType, b: ValueType, node: ast.Call) -> tuple:
    """a[..., K] x b[K, N] -> [..., N]."""
    if len(b.shape) != 2 or not a.shape:
        raise CompileError(f"matmul(a[..., K], b[K, N]) needs a 2-dim right operand and a "
                           f"left operand with dims, got {a} x {b}", node.location)
    _same_inner_dim(a.shape, b.shape, b.shape[0], node)
    return a.shape[:-1] + (b.shape[1],)


def _batched_shape(a: ValueType, b: ValueType, node: ast.Call) -> tuple:
    """a[..., M, K] x b[..., K, N] -> [..., M, N]: the dims before the last two are batch
    dims, aligned right; the operand with fewer of them is multiplied with every batch, and
    a batch dim written 1 is repeated along the other's (as torch.matmul broadcasts)."""
    if len(a.shape) < 2:
        raise CompileError(f"a batched matmul(a[..., M, K], b[..., K, N]) needs a left operand "
                           f"with at least 2 dims, got {a} x {b}", node.location,
                           hint="give the left operand a row dim of extent 1: x[1, K]")
    _same_inner_dim(a.shape, b.shape, b.shape[-2], node)
    batch_a, batch_b = a.shape[:-2], b.shape[:-2]
    longer, shorter = (batch_a, batch_b) if len(batch_a) >= len(batch_b) else (batch_b, batch_a)
    batch = list(longer)
    for i, dim in enumerate(shorter, start=len(longer) - len(shorter)):
        if dim != batch[i] and 1 not in (dim, batch[i]):
            raise CompileError(f"matmul batch dims differ: {shape_text(a.shape)} x "
                               f"{shape_text(b.shape)} (batch dims {shape_text(batch_a)} and "
                               f"{shape_text(batch_b)})", node.location,
                               hint="batch dims must be equal or 1; an operand may leave out "
                                    "leading ones")
        batch[i] = batch[i] if dim == 1 else dim
    return tuple(batch) + (a.shape[-2], b.shape[-1])


def _same_inner_dim(a: tuple, b: tuple, inner_b, node: ast.Call) -> None:
    if a[-1] != inner_b:
        raise CompileError(f"matmul shape mismatch: {shape_text(a)} x {shape_text(b)} "
                           f"(inner dims {a[-1]} and {inner_b} differ)", node.location)


def check_update(name: str, node: ast.Call, scope: Scope, updated: dict) -> ir.UpdateStage:
    target, value = positional(node, 2, "update(state, value)")
    if not isinstance(target, ast.NameRef):
        raise CompileError("update() needs a state name as its first argument", target.location)
    binding = scope.lookup(target.name, target.location)
    if binding.role != "state":
        what = {"input": "an input (inputs are read-only)", "param": "a param",
                "stage": "a computed value"}.get(binding.role, f"a {binding.role}")
        raise CompileError(f"'{target.name}' is {what}, not a state", target.location,
                           [ _decl_note(target.name, binding)],
                           hint="only tensors declared with `state` can be updated")
    if target.name in updated:
        raise CompileError(f"state '{target.name}' is updated twice in one step",
                           node.location, [Note("first updated here", updated[target.name])],
                           hint="a state may be updated at most once per step")
    expr = check_expr(value, scope)
    _check_update_value(target.name, binding.type, expr)
    updated[target.name] = node.location
    return ir.UpdateStage(name, target.name, expr, binding.type, node.location)


def _decl_note(name: str, binding) -> Note:
    return Note(f"'{name}' is declared here", binding.location)


def _check_update_value(state: str, st: ValueType, expr: ir.Expr) -> None:
    vt = expr.type
    if vt.dtype == "bool":
        raise CompileError("update with a bool value", expr.location, hint="cast it first")
    tail = st.shape[len(st.shape) - len(vt.shape):] if len(vt.shape) <= len(st.shape) else None
    if tail != vt.shape:
        raise CompileError(f"shape mismatch: state '{state}' is {shape_text(st.shape)} but the "
                           f"new value is {shape_text(vt.shape)}", expr.location)
    lay = aligned_dim(vt.layout, len(vt.shape), len(st.shape))
    ok = lay == st.layout or lay.is_world_replicated or (
        st.layout.kind == "local" and lay.kind == "replicated")
    if not ok:
        fix = {"local": "allreduce it first", "sliced": "allgather it first"}.get(
            lay.kind, "use a collective to give it the state's layout")
        raise CompileError(f"state '{state}' is {st.layout} but the new value is {lay}",
                           expr.location, hint=fix)
