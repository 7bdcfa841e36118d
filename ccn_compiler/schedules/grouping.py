"""Shared by `fuse` and `overlap`: convexity of a group of stages and where it goes."""

from __future__ import annotations

from parafuse.grammar.diagnostics import CompileError, Location

from .. import ir
from ..ir_edit import depends_on


def check_convex(program: ir.Program, members: set[str], location: Location) -> None:
    """No path may leave the group and come back into it."""
    deps = depends_on(program)
    for stage in program.stages:
        if stage.name in members:
            continue
        fed_by_group = bool(deps[stage.name] & members)
        feeds_group = any(stage.name in deps[m] for m in members)
        if fed_by_group and feeds_group:
            raise CompileError(f"the stages do not form a convex group: '{stage.name}' reads "
                               "one of them and is read by another", location,
                               hint=f"include '{stage.name}' in the group, or leave out the "
                               "stages after it")


def place_group(program: ir.Program, group: ir.GroupedStage) -> tuple[ir.Stage, ...]:
    """Top-level stages with `group` replacing its members.

    The group goes where its first member was; stages between its members that
    depend on a member move after it (convexity guarantees none of them feeds it).
    """
    members = {p.name for p in group.parts}
    deps = depends_on(program)
    names = [s.name for s in program.stages]
    first = min(names.index(m) for m in members)
    last = max(names.index(m) for m in members)
    before, after = list(program.stages[:first]), []
    for stage in program.stages[first:last + 1]:
        if stage.name in members:
            continue
        (after if deps[stage.name] & members else before).append(stage)
    return tuple(before + [group] + after + list(program.stages[last + 1:]))
