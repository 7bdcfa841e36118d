"""`tune(S, chunks = K)`: fix the chunk count of a fused or overlapped stage.

Before::    # fuse1 = fuse(rs, m1, v1, w1, agw), chunks auto
After ``tune(m1, chunks = 8)``::    # fuse1 = fuse(rs, m1, v1, w1, agw), chunks 8

The autotuner would otherwise choose; results do not depend on it.
"""

from __future__ import annotations

from dataclasses import replace

from parafuse.grammar import ccn_ast as ast
from parafuse.grammar.diagnostics import CompileError

from . import ir
from .ir_edit import group_of
from .schedule_context import ScheduleContext, require_count, stage_names


def check_arguments(directive: ast.Directive) -> tuple[ast.NameRef, int]:
    names = stage_names(directive)
    require_count(directive, names, 1, 1, "one stage and chunks = K")
    options = [a for a in directive.call.arguments if isinstance(a, ast.KeywordArgument)]
    if len(options) != 1:
        raise CompileError("tune() needs chunks = K", directive.location)
    value = options[0].value
    if not isinstance(value, ast.Number) or not value.is_integer or value.value < 1:
        raise CompileError("chunks must be a positive integer", value.location)
    if directive.targets:
        raise CompileError("tune() binds no names", directive.location)
    return names[0], value.value


def tune_stage(ctx: ScheduleContext, directive: ast.Directive) -> ir.Program:
    ref, chunks = check_arguments(directive)
    group = group_of(ctx.program, ref.name)
    if group is None:
        raise CompileError(f"tune needs a fused or overlapped stage; '{ref.name}' is in "
                           "neither", ref.location, hint="fuse or overlap it first")
    tuned = replace(group, chunks=chunks)
    return replace(ctx.program, stages=tuple(tuned if s.name == group.name else s
                                             for s in ctx.program.stages))
