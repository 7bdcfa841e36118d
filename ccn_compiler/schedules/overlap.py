"""`[o =] overlap(P, C)`: a producer and its consumer pipelined in chunks along dim 0.

Before::

    partial = matmul(x, w)          # f16[B, H] local
    y = allreduce(sum, partial)     # f16[B, H] replicated

After ``overlap(partial, y)``::

    # overlap1 = overlap(partial, y), chunks auto
    partial = matmul(x, w)
    y = allreduce(sum, partial)

Rows [i*b, (i+1)*b) of `y` depend only on the same rows of `partial`, so the
allreduce of chunk i runs while the matmul produces chunk i+1. Results are
unchanged; the reference interpreter runs the two stages in order. The chunk count is
`tune`'s, else open ("auto"): the backend chooses it (the CPU backend by measuring 1, 2
and 4 chunks over the first steps, the CUDA backend 4), and so does the autotuner.
"""

from __future__ import annotations

from dataclasses import replace

from parafuse.grammar import ccn_ast as ast
from parafuse.grammar.diagnostics import CompileError

from .. import ir
from ..ir_edit import names_read
from .context import ScheduleContext, lookup_stage
from .grouping import check_convex, place_group
from .record import Count, DirectiveRecord


def check_arguments(directive: ast.Directive) -> tuple[ast.NameRef, ast.NameRef, str | None]:
    """The producer, the consumer and the group's name, if one is bound."""
    names = RECORD.operand_refs(directive)
    RECORD.check_targets(directive)
    return names[0], names[1], directive.targets[0].name if directive.targets else None


def a_or_an(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def _kind(stage: ir.SimpleStage) -> str:
    if isinstance(stage, ir.CollectiveStage):
        return stage.op
    return "matmul" if isinstance(stage, ir.MatmulStage) else "element-wise"


def check_chunkable(stage: ir.SimpleStage, ref: ast.NameRef) -> None:
    vt = stage.type
    if not vt.shape:
        raise CompileError(f"'{ref.name}' is a scalar and has no dim 0 to chunk", ref.location)
    if vt.layout.kind == "sliced" and vt.layout.dim == 0:
        raise CompileError(f"'{ref.name}' is sliced along dim 0: a rank's block is not made of "
                           "whole chunks", ref.location)
    for expr in ir.stage_exprs(stage):
        for node in ir.walk(expr):
            if isinstance(node, ir.Reduce):
                raise CompileError(f"'{ref.name}' holds a scalar reduction, which needs every "
                                   "chunk at once", ref.location)
            if isinstance(node, ir.Transpose) and 0 in node.dims:
                raise CompileError(f"'{ref.name}' transposes dim 0, which needs every chunk "
                                   "at once", ref.location)
            if isinstance(node, ir.RowFunction) and node.dim == 0:
                raise CompileError(f"'{ref.name}' takes {node.kind}() over dim 0, which needs "
                                   "every chunk at once", ref.location)
            if isinstance(node, (ir.Slice, ir.AsSliced)) and node.dim == 0:
                raise CompileError(f"'{ref.name}' takes a range of dim 0, which needs every "
                                   "chunk at once", ref.location)
            if isinstance(node, ir.Reshape) and \
                    node.type.shape[:1] != node.operand.type.shape[:1]:
                raise CompileError(f"'{ref.name}' reshapes dim 0, which needs every chunk at "
                                   "once", ref.location)


def check_legality(p: ir.SimpleStage, c: ir.SimpleStage, p_ref: ast.NameRef,
                   c_ref: ast.NameRef) -> None:
    """Kinds that pipeline, `c` consumes `p`, both chunkable along dim 0, chunks aligned."""
    if _kind(p) not in ("matmul", "allreduce", "element-wise"):
        raise CompileError(f"overlap needs a matmul, allreduce or element-wise producer; "
                           f"'{p_ref.name}' is {a_or_an(_kind(p))} (a rank's block of a "
                           "reducescatter or allgather is not made of whole dim-0 chunks)"
                           if _kind(p) in ("reducescatter", "allgather") else
                           f"overlap cannot chunk the {_kind(p)} '{p_ref.name}'", p_ref.location)
    if isinstance(p, ir.MatmulStage) and p.batched:
        raise CompileError(f"overlap cannot chunk the batched matmul '{p_ref.name}' yet (a "
                           "chunk of its rows is a chunk of one batch)", p_ref.location,
                           hint="overlap a matmul whose right operand has 2 dims; leave this "
                           "one unscheduled")
    if _kind(c) not in ("allreduce", "send", "broadcast", "element-wise"):
        raise CompileError(f"overlap needs an allreduce, send, broadcast or element-wise "
                           f"consumer; '{c_ref.name}' is {a_or_an(_kind(c))}", c_ref.location)
    if p.name not in names_read(c):
        raise CompileError(f"'{c_ref.name}' does not consume '{p_ref.name}'", c_ref.location)
    for stage, ref in ((p, p_ref), (c, c_ref)):
        check_chunkable(stage, ref)
    if p.type.shape[0] != c.type.shape[0] or any(
            isinstance(n, ir.Ref) and n.name == p.name and len(n.type.shape) != len(c.type.shape)
            for e in ir.stage_exprs(c) for n in ir.walk(e)):
        raise CompileError(f"chunk i of '{c_ref.name}' does not line up with chunk i of "
                           f"'{p_ref.name}' along dim 0", c_ref.location)


def overlap_stages(ctx: ScheduleContext, directive: ast.Directive) -> ir.Program:
    """The program with producer and consumer grouped (see the module docstring)."""
    p_ref, c_ref, bound = check_arguments(directive)
    p, c = lookup_stage(ctx, p_ref), lookup_stage(ctx, c_ref)
    check_legality(p, c, p_ref, c_ref)
    check_convex(ctx.program, {p.name, c.name}, directive.location)
    group = ir.OverlapStage(bound or ctx.fresh_name("overlap"), (p, c), directive.location,
                            None)
    return replace(ctx.program, stages=place_group(ctx.program, group))


RECORD = DirectiveRecord(
    name="overlap", usage="[o =] overlap(P, C)", operands="a producer and a consumer",
    operand_count=Count(2, 2), target_count=Count(0, 1),
    rewrite=overlap_stages, check_arguments=check_arguments)
