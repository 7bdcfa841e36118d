"""`[mb =] microbatch(FIRST, LAST)`: the run of stages from FIRST to LAST executed on
micro-batches, chunks of rows along dim 0, as GPipe runs a forward pass.

Before (samples/pipeline.ccn)::

    on stage[0] {
        h1 = matmul(x, w1)              # bf16[B, F] sliced(1) in stage
        ...
        z = layernorm(r1, eps) * g1     # bf16[B, D] replicated in stage
    }
    on stage[1] {
        zin = send(z, stage, 1)         # bf16[B, D] replicated in stage
        ...
        out = layernorm(r2, eps) * g2   # bf16[B, D] replicated in stage
    }

After ``mb = microbatch(h1, out)``::

    # mb = microbatch(h1, ..., out), chunks 4
    on stage[0] { h1 = ... z = ... }
    on stage[1] { zin = ... out = ... }

For each micro-batch m in turn, every stage of the run computes its rows of m (a rank
runs the stages of its own pipeline stage), so stage 0's ranks work on m + 1 while stage
1's work on m. Results are unchanged: every value of the run is computed row by row, so
the reference interpreter runs the stages in order. The count is `tune`'s, else 4.
"""

from __future__ import annotations

from dataclasses import replace

from parafuse.grammar import ccn_ast as ast
from parafuse.grammar.diagnostics import CompileError, Location

from .. import ir
from .context import ScheduleContext, lookup_stage
from .overlap import a_or_an, check_chunkable
from .record import Count, DirectiveRecord

DEFAULT_MICRO_BATCHES = 4
KINDS = "element-wise stages, matmuls, allreduce, broadcast and send"


def check_arguments(directive: ast.Directive) -> tuple[ast.NameRef, ast.NameRef, str | None]:
    """The first and last stage of the run and the group's name, if one is bound."""
    names = RECORD.operand_refs(directive)
    RECORD.check_targets(directive)
    return names[0], names[1], directive.targets[0].name if directive.targets else None


def the_run(program: ir.Program, first: ir.SimpleStage, last: ir.SimpleStage,
            last_ref: ast.NameRef) -> list[ir.Stage]:
    """The top-level stages from `first` to `last`, in program order."""
    names = [s.name for s in program.stages]
    start, stop = names.index(first.name), names.index(last.name)
    if stop < start:
        raise CompileError(f"'{last_ref.name}' comes before '{first.name}'", last_ref.location,
                           hint="name the run's first stage, then its last")
    return list(program.stages[start:stop + 1])


def check_legality(run: list[ir.Stage], location: Location) -> None:
    """Every stage of the run is a simple stage of a kind that runs on rows, every value it
    makes has the run's dim 0, and no matmul multiplies by a value of the run."""
    batch = None
    made: set[str] = set()
    for stage in run:
        if isinstance(stage, ir.GROUPS):
            raise CompileError(f"'{stage.name}' in the run is a group of its own: micro-batches "
                               "run simple stages", location,
                               hint="write microbatch before fuse and overlap, or leave the "
                               "group out of the run")
        what = ast.NameRef(stage.name, location)
        _check_kind(stage, what)
        check_chunkable(stage, what)
        if batch is None:
            batch = stage.type.shape[0]
        elif stage.type.shape[0] != batch:
            raise CompileError(f"'{stage.name}' has {stage.type.shape[0]} rows along dim 0, not "
                               f"{batch} like the run's first stage: micro-batches cut every "
                               "value of the run into the same rows", location,
                               hint=_around(stage.name))
        _check_rows_read(stage, made, what)
        made.add(stage.name)


def _around(name: str) -> str:
    return f"end the run before '{name}', or begin it after"


def _check_kind(stage: ir.SimpleStage, ref: ast.NameRef) -> None:
    if isinstance(stage, ir.UpdateStage):
        raise CompileError(f"'{ref.name}' updates a state: micro-batches run {KINDS}",
                           ref.location, hint="end the run before the update")
    if isinstance(stage, ir.CollectiveStage) and stage.op not in ("allreduce", "broadcast",
                                                                    "send"):
        raise CompileError(f"'{ref.name}' is {a_or_an(stage.op)}: "
                           f"micro-batches run {KINDS} (a rank's block of a {stage.op} is not "
                           "made of whole rows of each micro-batch)", ref.location,
                           hint=_around(ref.name))
    if isinstance(stage, ir.CollectiveStage) and not isinstance(stage.operand, ir.Ref):
        raise CompileError(f"'{ref.name}' is {a_or_an(stage.op)} of an expression: in a "
                           "micro-batched run a collective reads a named value", ref.location,
                           hint="bind the expression to a name first")
    if isinstance(stage, ir.CollectiveStage) and stage.op == "allreduce" and \
            stage.operand.type.layout.kind == "replicated":
        raise CompileError(f"'{ref.name}' is a two-level allreduce (its operand is "
                           f"{stage.operand.type.layout}): micro-batches cannot cut it yet",
                           ref.location, hint="end the run before it")
    if isinstance(stage, ir.MatmulStage) and (stage.batched or len(stage.a.type.shape) < 2):
        raise CompileError(f"'{ref.name}' is a matmul without rows of its own (batched, or of "
                           "a 1-dim left operand): micro-batches cannot cut it", ref.location,
                           hint=_around(ref.name))


def _check_rows_read(stage: ir.SimpleStage, made: set[str], ref: ast.NameRef) -> None:
    """Rows of a micro-batch depend only on the same rows of the run's earlier values."""
    if isinstance(stage, ir.MatmulStage):
        late = sorted({n.name for n in ir.walk(stage.b) if isinstance(n, ir.Ref)} & made)
        if late:
            raise CompileError(f"matmul '{ref.name}' multiplies by '{late[0]}', a value of the "
                               "run: it needs every row of it at once", ref.location,
                               hint=_around(ref.name))
    rank = len(stage.type.shape)
    for expr in ir.stage_exprs(stage):
        for node in ir.walk(expr):
            if isinstance(node, ir.Ref) and node.name in made and \
                    len(node.type.shape) != rank:
                raise CompileError(f"'{ref.name}' reads '{node.name}' with other dims: its "
                                   "rows do not line up with the micro-batch's", ref.location,
                                   hint=_around(ref.name))


def microbatch_run(ctx: ScheduleContext, directive: ast.Directive) -> ir.Program:
    """The program with the run grouped (see the module docstring)."""
    first_ref, last_ref, bound = check_arguments(directive)
    first, last = lookup_stage(ctx, first_ref), lookup_stage(ctx, last_ref)
    run = the_run(ctx.program, first, last, last_ref)
    check_legality(run, directive.location)
    group = ir.MicroBatchStage(bound or ctx.fresh_name("microbatch"), tuple(run),
                               directive.location, DEFAULT_MICRO_BATCHES)
    names = [s.name for s in ctx.program.stages]
    start = names.index(first.name)
    stages = ctx.program.stages[:start] + (group,) + ctx.program.stages[start + len(run):]
    return replace(ctx.program, stages=stages)


RECORD = DirectiveRecord(
    name="microbatch", usage="[mb =] microbatch(FIRST, LAST)",
    operands="the first and the last stage of a run", operand_count=Count(2, 2),
    target_count=Count(0, 1), rewrite=microbatch_run, check_arguments=check_arguments)
