"""`tune(S, chunks = K)`: fix the chunk count of a fused, overlapped or micro-batched stage.

Before::    # fuse1 = fuse(rs, m1, v1, w1, agw), chunks auto
After ``tune(m1, chunks = 8)``::    # fuse1 = fuse(rs, m1, v1, w1, agw), chunks 8

The autotuner would otherwise choose; results do not depend on it.
"""

from __future__ import annotations

from dataclasses import replace

from parafuse.grammar import ccn_ast as ast
from parafuse.grammar.diagnostics import CompileError

from .. import ir
from ..ir_edit import group_of
from .context import ScheduleContext
from .record import Count, DirectiveRecord

MOST_CHUNKS = 65536  # a chunk count the generated code holds in an `int`, with room to spare


def check_arguments(directive: ast.Directive) -> tuple[ast.NameRef, int]:
    """The stage named and the chunk count K (a positive integer up to MOST_CHUNKS); no name
    bound."""
    names = RECORD.operand_refs(directive)
    options = [a for a in directive.call.arguments if isinstance(a, ast.KeywordArgument)]
    if len(options) != 1:
        raise CompileError("tune() needs chunks = K", directive.location)
    value = options[0].value
    if not isinstance(value, ast.Number) or not value.is_integer or value.value < 1:
        raise CompileError("chunks must be a positive integer", value.location)
    if value.value > MOST_CHUNKS:
        raise CompileError(f"chunks = {value.value} is more than {MOST_CHUNKS}",
                           value.location, hint="a stage is cut into at most that many chunks")
    RECORD.check_targets(directive)
    return names[0], value.value


def check_legality(program: ir.Program, ref: ast.NameRef) -> ir.GroupedStage:
    """The fused, overlapped or micro-batched group holding the stage `ref` names."""
    group = group_of(program, ref.name)
    if group is None:
        raise CompileError(f"tune needs a fused, overlapped or micro-batched stage; "
                           f"'{ref.name}' is in none", ref.location,
                           hint="fuse, overlap or microbatch it first")
    return group


def tune_stage(ctx: ScheduleContext, directive: ast.Directive) -> ir.Program:
    """The program with the group's chunk count fixed (see the module docstring)."""
    ref, chunks = check_arguments(directive)
    group = check_legality(ctx.program, ref)
    tuned = replace(group, chunks=chunks)
    return replace(ctx.program, stages=tuple(tuned if s.name == group.name else s
                                             for s in ctx.program.stages))


RECORD = DirectiveRecord(
    name="tune", usage="tune(S, chunks = K)", operands="one stage and chunks = K",
    operand_count=Count(1, 1), target_count=Count(0, 0), keywords=("chunks",),
    rewrite=tune_stage, check_arguments=check_arguments)
