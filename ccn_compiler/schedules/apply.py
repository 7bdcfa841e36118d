"""Apply a schedule: its directives, in order, each a rewrite of the program's IR.

The data path is check -> split/reorder/shard/fuse/overlap/tune -> scheduled IR,
which the reference interpreter and the backends execute.
"""

from __future__ import annotations

from .. import ir
from .check import Schedule
from .context import ScheduleContext
from .registry import DIRECTIVES


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
        ctx.program = DIRECTIVES[directive.name].rewrite(ctx, directive)
        verify_state_updates(ctx.program)
    return ctx.program
