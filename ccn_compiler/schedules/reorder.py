"""`g1, ... = reorder(AG, S1, ...)`: computation moves before a gather and runs on slices.

Before (after ``rs, ag = split(gsum)``)::

    rs = reducescatter(sum, g)                  # f16[N] sliced(0)
    ag = allgather(rs)                          # f16[N] replicated
    m1 = update(m, beta1 * m + (1 - beta1) * ag)    # f32[N] replicated
    w1 = update(w, w - lr * m1 / ...)           # f32[N] replicated

After ``agm, agw = reorder(ag, m1, w1)``::

    rs = reducescatter(sum, g)                  # f16[N] sliced(0)
    m1 = update(m, beta1 * m + (1 - beta1) * rs)    # f32[N] sliced(0): m read as its block
    agm = allgather(m1)                         # f32[N] replicated: m's next value
    w1 = update(w, w - lr * m1 / ...)           # f32[N] sliced(0)
    agw = allgather(w1)                         # f32[N] replicated: w's next value

A listed stage gets a gather when it is an output, the next value of a
replicated state, or read by an unlisted stage other than through
`sum`/`norm`/`amax` (those read the slice and reduce across ranks). `ag` is
removed when nothing reads it any more.
"""

from __future__ import annotations

from dataclasses import replace

from parafuse.grammar import ccn_ast as ast
from parafuse.grammar.diagnostics import CompileError

from .. import ir
from ..ir_edit import (
    is_used,
    map_simple_stages,
    names_read,
    remove_top_level,
    rename_in_stage,
    replace_top_level,
)
from ..types import Layout, ValueType
from .context import ScheduleContext, lookup_stage
from .record import Count, DirectiveRecord


def check_arguments(directive: ast.Directive) -> tuple[ast.NameRef, list[ast.NameRef]]:
    """The allgather and the stages listed after it, none listed twice.

    The number of names bound is checked by the rewrite: one per gather it inserts.
    """
    names = RECORD.operand_refs(directive)
    seen: set[str] = set()
    for ref in names[1:]:
        if ref.name in seen:
            raise CompileError(f"'{ref.name}' is listed twice", ref.location)
        seen.add(ref.name)
    return names[0], names[1:]


def check_legality(program: ir.Program, ag: ir.SimpleStage, ag_ref: ast.NameRef,
                   listed: list[ir.SimpleStage], refs: list[ast.NameRef]) -> None:
    """`ag` is an allgather; the listed stages are element-wise and consume it."""
    if not isinstance(ag, ir.CollectiveStage) or ag.op != "allgather":
        hint = "split the allreduce first: rs, ag = split(X)" \
            if isinstance(ag, ir.CollectiveStage) and ag.op == "allreduce" else None
        raise CompileError(f"reorder needs an allgather, but '{ag_ref.name}' is not one",
                           ag_ref.location, hint=hint)
    reached = {ag.name}
    order = {s.name: i for i, s in enumerate(program.flat_stages())}
    for stage, ref in sorted(zip(listed, refs), key=lambda pair: order[pair[0].name]):
        if not isinstance(stage, (ir.ElementwiseStage, ir.UpdateStage)):
            raise CompileError(f"only element-wise stages can run on slices; '{ref.name}' is "
                               "not element-wise", ref.location)
        if not names_read(stage) & reached:
            raise CompileError(f"'{ref.name}' does not consume '{ag.name}' (directly or through "
                               "the other listed stages)", ref.location)
        local = _local_read(stage, ag.name)
        if local:
            raise CompileError(f"'{ref.name}' reads the local value '{local}', which has no "
                               "slices", ref.location)
        reached.add(stage.name)


def _local_read(stage: ir.SimpleStage, skip: str) -> str | None:
    for expr in ir.stage_exprs(stage):
        for node in ir.walk(expr):
            if isinstance(node, ir.Ref) and node.name != skip and \
                    node.type.layout.kind == "local":
                return node.name
    return None


def _gather_reasons(program: ir.Program, stage: ir.SimpleStage, listed: set[str]) -> list[str]:
    reasons = []
    if any(v == stage.name for _, v in program.outputs):
        reasons.append("an output")
    for state, value in program.state_updates:
        if value == stage.name and program.tensor(state).type.layout.kind == "replicated":
            reasons.append(f"the next value of replicated state '{state}'")
    for reader in program.flat_stages():
        if _is_gather_of(reader, stage.name):
            continue  # the stage was reordered before and is gathered already
        if reader.name not in listed and _reads_whole(reader, stage.name):
            reasons.append(f"read whole by '{reader.name}'")
    return reasons


def _is_gather_of(stage: ir.SimpleStage, name: str) -> bool:
    return isinstance(stage, ir.CollectiveStage) and stage.op == "allgather" and \
        isinstance(stage.operand, ir.Ref) and stage.operand.name == name


def _reads_whole(reader: ir.SimpleStage, name: str) -> bool:
    """Does `reader` read `name` other than as the operand of sum/norm/amax?"""
    for expr in ir.stage_exprs(reader):
        for node in ir.walk(expr):
            kids = ir.children(node)
            if isinstance(node, ir.Ref) and node is expr and node.name == name:
                return True
            if not isinstance(node, ir.Reduce) and any(
                    isinstance(k, ir.Ref) and k.name == name for k in kids):
                return True
    return False


def reorder_before_gather(ctx: ScheduleContext, directive: ast.Directive) -> ir.Program:
    """The program with the listed stages run on slices (see the module docstring)."""
    ag_ref, refs = check_arguments(directive)
    ag = lookup_stage(ctx, ag_ref)
    listed = [lookup_stage(ctx, r) for r in refs]
    check_legality(ctx.program, ag, ag_ref, listed, refs)
    names = {s.name for s in listed}
    ctx.program = map_simple_stages(
        ctx.program, lambda s: rename_in_stage(s, ag.name, ag.operand) if s.name in names else s)
    # readers outside the list read the gathers inserted below, checked by the next relayout
    ctx.program = ctx.relayout(directive, f"moving {', '.join(sorted(names))} onto slices",
                               frozenset(names))
    needing = [(s, r) for s in ctx.program.flat_stages() if s.name in names
               and s.type.layout.kind == "sliced"
               and (r := _gather_reasons(ctx.program, s, names))]
    if len(needing) != len(directive.targets):
        listed_text = "; ".join(f"'{s.name}' ({', '.join(r)})" for s, r in needing) or "none"
        raise CompileError(f"reorder binds {len(directive.targets)} names, but "
                           f"{len(needing)} of the listed stages need a gather: {listed_text}",
                           directive.location,
                           hint="write one name on the left for each, in the listed order")
    order = {r.name: i for i, r in enumerate(refs)}
    needing.sort(key=lambda pair: order[pair[0].name])
    for (stage, _), target in zip(needing, directive.targets):
        ctx.program = _insert_gather(ctx.program, stage, target.name, names, directive)
    ctx.program = ctx.relayout(directive, "gathering the reordered stages")
    if not is_used(ctx.program, ag.name):
        ctx.program = remove_top_level(ctx.program, ag.name)
        ctx.remove(ag.name, directive)
    return ctx.program


def _insert_gather(program: ir.Program, stage: ir.SimpleStage, name: str, listed: set[str],
                   directive: ast.Directive) -> ir.Program:
    lay = stage.type.layout
    gather_type = ValueType(stage.type.dtype, stage.type.shape,
                            Layout("replicated", None, lay.group))
    gather = ir.CollectiveStage(name, "allgather", ir.Ref(stage.name, stage.type,
                                                          directive.location),
                                gather_type, directive.location, group=lay.group)
    program = replace_top_level(program, stage.name, (stage, gather))
    new_ref = ir.Ref(name, gather_type, directive.location)

    def reread(s: ir.SimpleStage) -> ir.SimpleStage:
        if s.name in listed or s.name == name or _is_gather_of(s, stage.name):
            return s
        return rename_in_stage(s, stage.name, new_ref,
                               keep=lambda parent: isinstance(parent, ir.Reduce))
    program = map_simple_stages(program, reread)
    swap = {stage.name: name}
    return replace(program,
                   outputs=tuple((n, swap.get(v, v)) for n, v in program.outputs),
                   state_updates=tuple(
                       (s, swap.get(v, v) if program.tensor(s).type.layout.kind == "replicated"
                        else v) for s, v in program.state_updates))


RECORD = DirectiveRecord(
    name="reorder", usage="g1, ... = reorder(AG, S1, ...)",
    operands="an allgather and the stages to move before it",
    operand_count=Count(2, None), target_count=Count(0, None),
    rewrite=reorder_before_gather, check_arguments=check_arguments)
