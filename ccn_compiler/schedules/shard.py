"""`shard(T, ...)`: a replicated state is stored sliced; gathers that only fed it go away.

Before (after split and reorder)::

    state m: f32[N] replicated
    m1 = update(m, beta1 * m + (1 - beta1) * rs)   # f32[N] sliced(0): reads m's block
    agm = allgather(m1)                            # f32[N] replicated: m's next value

After ``shard(m)``::

    state m: f32[N] sliced(0)                      # each rank stores (and writes) its block
    m1 = update(m, beta1 * m + (1 - beta1) * rs)   # f32[N] sliced(0): m's next value

Legal only when every read of `T` is already a block read or a reduction, so
that no stage's layout (and so no result) changes.
"""

from __future__ import annotations

from dataclasses import replace

from parafuse.grammar import ccn_ast as ast
from parafuse.grammar.diagnostics import CompileError

from .. import ir
from ..ir_edit import is_used, readers, remove_top_level
from ..layout_rules import LayoutConflict
from ..relayout import relayout_program
from ..types import ValueType, sliced
from .context import ScheduleContext
from .record import Count, DirectiveRecord


def check_arguments(directive: ast.Directive) -> list[ast.NameRef]:
    """The states named (one or more); no name bound."""
    names = RECORD.operand_refs(directive)
    RECORD.check_targets(directive)
    return names


def _state(program: ir.Program, ref: ast.NameRef) -> ir.Tensor:
    tensor = program.tensor(ref.name)
    if tensor is None or tensor.role != "state":
        raise CompileError(f"shard needs a state, but '{ref.name}' is not one", ref.location)
    if not tensor.type.layout.is_world_replicated:
        raise CompileError(f"shard needs a replicated state, but '{ref.name}' is "
                           f"{tensor.type.layout}", ref.location)
    if not tensor.type.shape:
        raise CompileError(f"shard cannot slice the scalar state '{ref.name}'", ref.location)
    return tensor


def _candidate_dims(program: ir.Program, tensor: ir.Tensor) -> list[int]:
    """The dim the state's next value is gathered along first, then every dim."""
    dims = list(range(len(tensor.type.shape)))
    value = dict(program.state_updates).get(tensor.name)
    stage = program.stage(value) if value else None
    if isinstance(stage, ir.CollectiveStage) and stage.op == "allgather":
        lay = stage.operand.type.layout
        if lay.group is None:
            dims.insert(0, lay.dim)
    return dims


def _layouts(program: ir.Program) -> dict[str, object]:
    return {s.name: s.type.layout for s in program.flat_stages()}


def check_legality(program: ir.Program, tensor: ir.Tensor, ref: ast.NameRef) -> ir.Program:
    """The program with `tensor` stored sliced, if no stage's layout changes; else an error."""
    before = _layouts(program)
    problem = "it is never read"
    for dim in _candidate_dims(program, tensor):
        stored = replace(tensor, type=ValueType(tensor.type.dtype, tensor.type.shape,
                                                sliced(dim)))
        trial = replace(program, tensors=tuple(stored if t.name == tensor.name else t
                                               for t in program.tensors))
        try:
            trial = relayout_program(trial)
        except LayoutConflict as conflict:
            problem = conflict.message
            continue
        changed = [n for n, lay in _layouts(trial).items() if lay != before[n]]
        if not changed:
            return trial
        problem = f"stage '{changed[0]}' reads it whole ({before[changed[0]]})"
    names = ", ".join(f"'{s.name}'" for s in readers(program, tensor.name))
    raise CompileError(f"cannot shard '{tensor.name}': {problem}", ref.location,
                       hint=f"reorder its readers ({names or 'none'}) onto slices first")


def _drop_feeding_gather(ctx: ScheduleContext, state: str, directive: ast.Directive) -> None:
    value = dict(ctx.program.state_updates).get(state)
    stage = ctx.program.stage(value) if value else None
    stored = ctx.program.tensor(state).type.layout
    if not (isinstance(stage, ir.CollectiveStage) and stage.op == "allgather"
            and isinstance(stage.operand, ir.Ref) and stage.operand.type.layout == stored):
        return
    source = stage.operand.name
    updates = tuple((s, source if s == state else v) for s, v in ctx.program.state_updates)
    ctx.program = replace(ctx.program, state_updates=updates)
    if not is_used(ctx.program, stage.name):
        ctx.program = remove_top_level(ctx.program, stage.name)
        ctx.remove(stage.name, directive)


def shard_states(ctx: ScheduleContext, directive: ast.Directive) -> ir.Program:
    """The program with the named states stored sliced (see the module docstring)."""
    for ref in check_arguments(directive):
        tensor = _state(ctx.program, ref)
        ctx.program = check_legality(ctx.program, tensor, ref)
        _drop_feeding_gather(ctx, tensor.name, directive)
    return ctx.relayout(directive, "sharding")


RECORD = DirectiveRecord(
    name="shard", usage="shard(T, ...)", operands="one or more state names",
    operand_count=Count(1, None), target_count=Count(0, 0),
    rewrite=shard_states, check_arguments=check_arguments)
