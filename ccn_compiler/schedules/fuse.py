"""`[f =] fuse(S1, ...)`: stages that backends lower as one kernel or one fused collective.

Before (after split, reorder and shard)::

    rs = reducescatter(sum, g)         # f16[N] sliced(0)
    m1 = update(m, ... rs)             # f32[N] sliced(0)
    v1 = update(v, ... rs * rs)        # f32[N] sliced(0)
    w1 = update(w, w - lr * m1 / ...)  # f32[N] sliced(0)
    agw = allgather(w1)                # f32[N] replicated

After ``fuse(rs, m1, v1, w1, agw)``::

    # fuse1 = fuse(rs, m1, v1, w1, agw)
    rs = ...; m1 = ...; v1 = ...; w1 = ...; agw = ...

one fused collective: each chunk is transformed as soon as it is reduced, and
its gather starts while later chunks are still being reduced. The parts and
their results are unchanged, so the reference interpreter runs them in order.
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

REJECTED = {
    "allreduce": "an allreduce cannot be fused: split it first (rs, ag = split(X))",
    "broadcast": "a broadcast cannot be fused",
    "send": "a send cannot be fused",
}


def check_arguments(directive: ast.Directive) -> tuple[list[ast.NameRef], str | None]:
    """The stages named (two or more, none twice) and the group's name, if one is bound."""
    names = RECORD.operand_refs(directive)
    RECORD.check_targets(directive)
    if len({n.name for n in names}) != len(names):
        raise CompileError("a stage is listed twice", directive.location)
    return names, directive.targets[0].name if directive.targets else None


def _check_kind(stage: ir.SimpleStage, ref: ast.NameRef) -> None:
    if isinstance(stage, ir.MatmulStage):
        raise CompileError(f"'{ref.name}' is a matmul, which cannot be fused", ref.location,
                           hint="overlap(matmul, collective) pipelines a matmul instead")
    if isinstance(stage, ir.CollectiveStage) and stage.op in REJECTED:
        raise CompileError(f"'{ref.name}': {REJECTED[stage.op]}", ref.location)


def check_legality(program: ir.Program, stages: list[ir.SimpleStage],
                   refs: list[ast.NameRef], directive: ast.Directive) -> None:
    """Fusable kinds, reducescatter first and allgather last, one iteration space, convex."""
    members = {s.name for s in stages}
    shapes = {s.type.shape for s in stages if s.type.shape}
    for stage, ref in zip(stages, refs):
        _check_kind(stage, ref)
        inside = names_read(stage) & members
        if isinstance(stage, ir.CollectiveStage) and stage.op == "reducescatter" and inside:
            raise CompileError(f"the reducescatter '{ref.name}' must start the group, but it "
                               f"reads '{sorted(inside)[0]}' from it", ref.location)
        if isinstance(stage, ir.CollectiveStage) and stage.op == "allgather":
            if not isinstance(stage.operand, ir.Ref):  # its chunks are read from a buffer
                raise CompileError(f"the allgather '{ref.name}' gathers an expression, which "
                                   "a fused group cannot chunk", ref.location,
                                   hint=f"bind it first (t = ...; {ref.name} = allgather(t)) "
                                        "and list t in the group")
            later = [s.name for s in stages if stage.name in names_read(s)]
            if later:
                raise CompileError(f"the allgather '{ref.name}' must end the group, but "
                                   f"'{later[0]}' reads it", ref.location)
    scatters = [r for s, r in zip(stages, refs)
                if isinstance(s, ir.CollectiveStage) and s.op == "reducescatter"]
    if len(scatters) > 1:
        raise CompileError("a fused group holds at most one reducescatter", scatters[1].location)
    if len(shapes) > 1:
        listed = " and ".join("[" + ", ".join(map(str, s)) + "]" for s in sorted(shapes, key=str))
        raise CompileError(f"the stages do not share one iteration space ({listed})",
                           directive.location)
    check_convex(program, members, directive.location)


def fuse_stages(ctx: ScheduleContext, directive: ast.Directive) -> ir.Program:
    """The program with the named stages grouped (see the module docstring)."""
    refs, bound = check_arguments(directive)
    stages = [lookup_stage(ctx, r) for r in refs]
    check_legality(ctx.program, stages, refs, directive)
    order = {s.name: i for i, s in enumerate(ctx.program.flat_stages())}
    parts = tuple(sorted(stages, key=lambda s: order[s.name]))
    group = ir.FusedStage(bound or ctx.fresh_name("fuse"), parts, directive.location)
    return replace(ctx.program, stages=place_group(ctx.program, group))


RECORD = DirectiveRecord(
    name="fuse", usage="[f =] fuse(S1, S2, ...)", operands="two or more stages",
    operand_count=Count(2, None), target_count=Count(0, 1),
    rewrite=fuse_stages, check_arguments=check_arguments)
