"""`rs, ag = split(X)`: an allreduce becomes a reducescatter followed by an allgather.

Before::

    gsum = allreduce(sum, g)                 # f16[N] replicated
    m1 = update(m, beta1 * m + ... gsum)

After ``rs, ag = split(gsum)``::

    rs = reducescatter(sum, g)               # f16[N] sliced(0)
    ag = allgather(rs)                       # f16[N] replicated
    m1 = update(m, beta1 * m + ... ag)

Every reader of ``gsum`` (stages, outputs) reads ``ag``; ``gsum`` no longer exists.
"""

from __future__ import annotations

from dataclasses import replace

from parafuse.grammar import ccn_ast as ast
from parafuse.grammar.diagnostics import CompileError

from .. import ir
from ..ir_edit import map_simple_stages, rename_in_stage, replace_top_level
from ..types import Layout, ValueType, sliced
from .context import ScheduleContext, lookup_stage
from .record import Count, DirectiveRecord


def check_arguments(directive: ast.Directive) -> ast.NameRef:
    """The allreduce named; two names bound (the reducescatter and the allgather)."""
    names = RECORD.operand_refs(directive)
    RECORD.check_targets(directive)
    return names[0]


def check_legality(stage: ir.SimpleStage, ref: ast.NameRef) -> ir.CollectiveStage:
    """`stage` must be an allreduce of a local, non-scalar value."""
    if not isinstance(stage, ir.CollectiveStage) or stage.op != "allreduce":
        kind = stage.op if isinstance(stage, ir.CollectiveStage) else "not a collective"
        raise CompileError(f"split needs an allreduce, but '{ref.name}' is {kind}",
                           ref.location)
    operand = stage.operand.type
    if operand.layout.kind != "local":
        raise CompileError(f"split needs an allreduce of a local value; '{ref.name}' reduces a "
                           f"{operand.layout} value (the second level of a hierarchical "
                           "reduction)", ref.location)
    if operand.is_scalar:
        raise CompileError(f"split cannot slice the scalar allreduce '{ref.name}'", ref.location,
                           hint="a reducescatter needs a tensor with at least one dim")
    return stage


def split_allreduce(ctx: ScheduleContext, directive: ast.Directive) -> ir.Program:
    """The program with the named allreduce split in two (see the module docstring)."""
    ref = check_arguments(directive)
    stage = check_legality(lookup_stage(ctx, ref), ref)
    rs_name, ag_name = (t.name for t in directive.targets)
    vt = stage.type
    rs_type = ValueType(vt.dtype, vt.shape, sliced(0, stage.group))
    rs = ir.CollectiveStage(rs_name, "reducescatter", stage.operand, rs_type,
                            directive.location, reduce_op=stage.reduce_op, group=stage.group)
    ag_type = ValueType(vt.dtype, vt.shape, Layout("replicated", None, stage.group))
    ag = ir.CollectiveStage(ag_name, "allgather", ir.Ref(rs_name, rs_type, directive.location),
                            ag_type, directive.location, group=stage.group)
    program = replace_top_level(ctx.program, stage.name, (rs, ag))
    new_ref = ir.Ref(ag_name, ag_type, directive.location)
    program = map_simple_stages(program, lambda s: rename_in_stage(s, stage.name, new_ref))
    program = replace(
        program,
        outputs=tuple((n, ag_name if v == stage.name else v) for n, v in program.outputs),
        state_updates=tuple((s, ag_name if v == stage.name else v)
                            for s, v in program.state_updates))
    ctx.remove(stage.name, directive)
    return program


RECORD = DirectiveRecord(
    name="split", usage="rs, ag = split(X)", operands="one allreduce stage",
    operand_count=Count(1, 1), target_count=Count(2, 2),
    rewrite=split_allreduce, check_arguments=check_arguments)
