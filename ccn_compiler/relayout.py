"""Re-infer layouts in the IR after a rewrite changed the layout of some values.

Rewrites never change dtypes or logical shapes, only where values live: a
reordered stage becomes sliced, a sharded state is stored sliced. This pass
recomputes every node's layout bottom-up with the rules of `layout_rules`, and
raises `LayoutConflict` where the new layouts break a rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from . import ir
from .ir_edit import names_read
from .layout_rules import (
    LayoutConflict,
    aligned_dim,
    as_sliced_layout,
    join_all,
    matmul_layout,
    reshaped_layout,
    row_function_layout,
    sliced_range_layout,
    transposed_layout,
)
from .special_calls import reduction_layout
from .types import Layout, ValueType

TypeOf = Callable[[str], ValueType]


def _with_layout(vt: ValueType, layout: Layout) -> ValueType:
    return ValueType(vt.dtype, vt.shape, layout)


def relayout_expr(node: ir.Expr, type_of: TypeOf) -> ir.Expr:
    if isinstance(node, ir.Const):
        return node
    if isinstance(node, ir.Ref):
        return replace(node, type=type_of(node.name))
    if isinstance(node, ir.Reduce):
        operand = relayout_expr(node.operand, type_of)
        layout = reduction_layout(operand.type.layout)
        return replace(node, operand=operand, cross_rank=operand.type.layout.kind == "sliced",
                       type=_with_layout(node.type, layout))
    if isinstance(node, ir.Binary):
        left, right = relayout_expr(node.left, type_of), relayout_expr(node.right, type_of)
        layout = join_all([left.type, right.type], node.type.shape)
        return replace(node, left=left, right=right, type=_with_layout(node.type, layout))
    if isinstance(node, ir.Func):
        args = tuple(relayout_expr(a, type_of) for a in node.args)
        layout = join_all([a.type for a in args], node.type.shape)
        return replace(node, args=args, type=_with_layout(node.type, layout))
    if isinstance(node, (ir.Unary, ir.Cast)):
        operand = relayout_expr(node.operand, type_of)
        return replace(node, operand=operand, type=_with_layout(node.type, operand.type.layout))
    if isinstance(node, ir.Dropout):
        operand = relayout_expr(node.operand, type_of)
        return replace(node, operand=operand, type=_with_layout(node.type, operand.type.layout))
    if isinstance(node, ir.Transpose):
        operand = relayout_expr(node.operand, type_of)
        layout = transposed_layout(operand.type.layout, node.dims)
        return replace(node, operand=operand, type=_with_layout(node.type, layout))
    if isinstance(node, ir.Slice):
        operand = relayout_expr(node.operand, type_of)
        layout = sliced_range_layout(operand.type.layout, node.dim)
        return replace(node, operand=operand, type=_with_layout(node.type, layout))
    if isinstance(node, ir.AsSliced):
        operand = relayout_expr(node.operand, type_of)
        if operand.type.layout == node.type.layout:  # a schedule sliced it already
            return operand
        layout = as_sliced_layout(operand.type.layout, node.dim, node.type.layout.group)
        return replace(node, operand=operand, type=_with_layout(node.type, layout))
    if isinstance(node, ir.Reshape):
        operand = relayout_expr(node.operand, type_of)
        layout = reshaped_layout(operand.type.layout, operand.type.shape, node.type.shape)
        return replace(node, operand=operand, type=_with_layout(node.type, layout))
    assert isinstance(node, ir.RowFunction)
    operand = relayout_expr(node.operand, type_of)
    layout = row_function_layout(node.kind, operand.type.layout, node.dim)
    return replace(node, operand=operand, type=_with_layout(node.type, layout))


def _update_layout(stage: ir.UpdateStage, expr: ir.Expr, stored: Layout) -> Layout:
    lay = aligned_dim(expr.type.layout, len(expr.type.shape), len(stage.type.shape))
    if lay.kind == "sliced":
        return lay
    if lay.kind == "local" and stored.kind != "local":
        raise LayoutConflict(f"the update of '{stage.state}' would become local")
    return stored


def relayout_stage(stage: ir.SimpleStage, type_of: TypeOf) -> ir.SimpleStage:
    """The stage with every layout recomputed from the layouts `type_of` gives its inputs."""
    if isinstance(stage, ir.ElementwiseStage):
        expr = relayout_expr(stage.expr, type_of)
        return replace(stage, expr=expr, type=_with_layout(stage.type, expr.type.layout))
    if isinstance(stage, ir.UpdateStage):
        expr = relayout_expr(stage.expr, type_of)
        stored = type_of(stage.state).layout
        return replace(stage, expr=expr,
                       type=_with_layout(stage.type, _update_layout(stage, expr, stored)))
    if isinstance(stage, ir.MatmulStage):
        a, b = relayout_expr(stage.a, type_of), relayout_expr(stage.b, type_of)
        return replace(stage, a=a, b=b, type=_with_layout(stage.type, matmul_layout(a.type,
                                                                                     b.type)))
    operand = relayout_expr(stage.operand, type_of)
    if not _collective_accepts(stage, operand.type.layout):
        raise LayoutConflict(f"the operand of {stage.op} '{stage.name}' would be "
                             f"{operand.type.layout}")
    if stage.op == "send":  # a send keeps its operand's layout
        return replace(stage, operand=operand, type=_with_layout(stage.type, operand.type.layout))
    return replace(stage, operand=operand)


def _collective_accepts(stage: ir.CollectiveStage, layout: Layout) -> bool:
    """Is `layout` still a legal input of the collective (docs/ccn-language.md section 7)?"""
    if stage.op == "allgather":
        return layout.kind == "sliced" and layout.group == stage.group
    if stage.op == "send":
        return layout.kind != "sliced" or layout.group == stage.group
    if stage.op == "allreduce" and layout.kind == "replicated":
        return layout == stage.operand.type.layout and layout.group is not None
    return layout.kind == "local"


def relayout_program(program: ir.Program, pending: frozenset[str] = frozenset()) -> ir.Program:
    """Recompute the layouts of every stage, in order. A stage outside `pending` that reads
    one of `pending` (values a rewrite is about to gather) is left as it is for now."""
    types: dict[str, ValueType] = {p.name: ValueType(p.dtype, (), Layout("replicated"))
                                   for p in program.params}
    types.update({t.name: t.type for t in program.tensors})

    def redo(stage: ir.SimpleStage) -> ir.SimpleStage:
        reads_pending = stage.name not in pending and names_read(stage) & pending
        new = stage if reads_pending else relayout_stage(stage, types.__getitem__)
        types[new.name] = new.type
        return new

    stages = []
    for stage in program.stages:
        if isinstance(stage, ir.GROUPS):
            stages.append(replace(stage, parts=tuple(redo(p) for p in stage.parts)))
        else:
            stages.append(redo(stage))
    return replace(program, stages=tuple(stages))
