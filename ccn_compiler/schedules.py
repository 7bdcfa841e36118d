"""Apply a schedule: its directives, in order, each a rewrite of the program's IR.

The data path is check -> split/reorder/shard/fuse/overlap/tune -> scheduled IR,
which the reference interpreter and the backends execute.
"""

from __future__ import annotations

from . import ir
from .check_schedule import Schedule
from .fuse import fuse_stages
from .overlap import overlap_stages
from .reorder import reorder_before_gather
from .schedule_context import ScheduleContext
from .shard import shard_states
from .split import split_allreduce
from .tune import tune_stage

REWRITES = {
    "split": split_allreduce,
    "reorder": reorder_before_gather,
    "shard": shard_states,
    "fuse": fuse_stages,
    "overlap": overlap_stages,
    "tune": tune_stage,
}


def verify_state_updates(program: ir.Program) -> None:
    """Every state's next value must be storable: same layout, or replicated (block kept)."""
    for state, value in program.state_updates:
        stored = program.tensor(state).type.layout
        given = program.value_type(value).layout
        if given != stored and not given.is_world_replicated:
            raise AssertionError(f"internal error: state '{state}' is stored {stored} but its "
                                 f"next value '{value}' is {given}")


def apply_schedule(program: ir.Program, schedule: Schedule) -> ir.Program:
    """The program after every directive of `schedule`; raises CompileError at a directive."""
    ctx = ScheduleContext(program)
    for directive in schedule.directives:
        ctx.program = REWRITES[directive.name](ctx, directive)
        verify_state_updates(ctx.program)
    return ctx.program
