"""Pipeline stages: what an `on G[k] { ... }` block places, and which values its statements
may read (docs/ccn-language.md, "Pipeline stages").

A statement inside the block runs on the ranks of block k of group G only, and so do the
tensors declared there: their `replicated` and `sliced` layouts are within the block
(`replicated in G`), and collectives run among the block's ranks. A statement reads values of
its own block or values every rank holds; `send` alone moves a value to another block.
"""

from __future__ import annotations

from dataclasses import replace

from parafuse.grammar import ccn_ast as ast
from parafuse.grammar.diagnostics import CompileError

from . import ir
from .scope import Scope, did_you_mean
from .types import Layout


def enter_block(block: ast.OnBlock, scope: Scope) -> ir.Placement:
    """The placement an `on G[k]` block gives its statements."""
    if scope.placement is not None:
        raise CompileError(f"an `on` block inside `on {scope.placement}`", block.location,
                           hint="a statement runs on one stage: close the first block")
    name = block.group.name
    group = scope.groups.get(name)
    if group is None:
        raise CompileError(f"unknown group '{name}'", block.group.location,
                           hint=did_you_mean(name, list(scope.groups)) or
                           f"declare it first: group {name} = blocks(K)")
    index = block.block.value
    if not block.block.is_integer or not 0 <= index < group.blocks:
        raise CompileError(f"group '{name}' has blocks 0 .. {group.blocks - 1}, not "
                           f"{block.block.text}", block.block.location)
    return ir.Placement(name, index)


def check_in_block(stmt: ast.Statement, scope: Scope) -> None:
    """Only tensors, outputs and assignments belong to one stage."""
    what = {ast.ParamDecl: "a param", ast.GroupDecl: "a group"}.get(type(stmt))
    if what is not None:
        raise CompileError(f"{what} cannot be declared inside `on {scope.placement}`",
                           stmt.location, hint="declare it before the block: every rank has it")


def placed_layout(layout: Layout, placement: ir.Placement | None) -> Layout:
    """A declared layout inside a block: replicated and sliced among the block's ranks."""
    if placement is None or layout.kind == "local":
        return layout
    return replace(layout, group=placement.group)


def collective_group(op: str, group: str | None, node: ast.Call, scope: Scope) -> str | None:
    """Inside a block, collectives run among its ranks: `in G` is implied, another group
    refused."""
    here = scope.placement
    if here is None or op == "send":
        return group
    if group is not None and group != here.group:
        raise CompileError(f"inside `on {here}` a collective runs among that block's ranks, "
                           f"not in '{group}'", node.location,
                           hint=f"write `in {here.group}`, or nothing")
    return here.group


def _send_placement(stage: ir.CollectiveStage, scope: Scope, blocks: int) -> ir.Placement | None:
    """Where a send's result lives: its operand's block moved by the shift, or the block it
    is written in (an operand every rank holds); None for a ring shift of every block."""
    sources = {scope.bindings[node.name].place for node in ir.walk(stage.operand)
               if isinstance(node, ir.Ref)} - {None}
    here = scope.placement
    if len(sources) > 1:
        raise CompileError("a send reads values of two stages (" +
                           ", ".join(sorted(map(str, sources))) + ")", stage.operand.location)
    if not sources:
        return here
    source = sources.pop()
    if source.group != stage.group:
        raise CompileError(f"'{stage.name}' sends a value of {source} along group "
                           f"'{stage.group}'", stage.location,
                           hint=f"send it between the blocks of '{source.group}'")
    dest = ir.Placement(source.group, (source.block + stage.shift) % blocks)
    if here is not None and dest != here:
        raise CompileError(f"this send moves a value of {source} to {dest}, not to {here}",
                           stage.location, hint=f"use shift {here.block - source.block}")
    return dest


def stage_placement(stage: ir.Stage, scope: Scope) -> ir.Placement | None:
    """Check what a new stage reads against where it runs; return where it runs."""
    here = scope.placement
    if isinstance(stage, ir.CollectiveStage) and stage.op == "send":
        if here is not None and stage.group != here.group:
            raise CompileError(f"inside `on {here}` a send moves values between the blocks "
                               f"of '{here.group}', not of '{stage.group}'", stage.location)
        here = _send_placement(stage, scope, scope.groups[stage.group].blocks)
        _check_reads(stage, scope, here, skip_placed=True)
        return here
    if isinstance(stage, ir.UpdateStage):
        state = scope.bindings[stage.state].place
        if state != here:
            where = f"inside `on {state}`" if state else "outside `on` blocks"
            raise CompileError(f"state '{stage.state}' lives on "
                               f"{state or 'every rank'}: update it {where}", stage.location)
    _check_reads(stage, scope, here, skip_placed=False)
    return here


def _check_reads(stage: ir.Stage, scope: Scope, here: ir.Placement | None,
                 skip_placed: bool) -> None:
    for expr in ir.stage_exprs(stage):
        for node in ir.walk(expr):
            if not isinstance(node, ir.Ref):
                continue
            there = scope.bindings[node.name].place
            if there is not None and not skip_placed and there != here:
                raise CompileError(*_misplaced(node.name, there, here), node.location,
                                   hint=_send_hint(node.name, there, here))
            lay = node.type.layout
            if there is None and here is not None and lay.kind != "local" and \
                    lay.group != here.group and not lay.is_world_replicated:
                raise CompileError(f"'{node.name}' is {lay} across every rank, so the ranks of "
                                   f"{here} do not hold it", node.location,
                                   hint="allgather it before the block")


def _misplaced(name: str, there: ir.Placement, here: ir.Placement | None) -> tuple[str]:
    if here is None:
        return (f"'{name}' lives on {there} only, but this statement runs on every rank",)
    return (f"'{name}' lives on {there}, but this statement runs on {here}",)


def _send_hint(name: str, there: ir.Placement, here: ir.Placement | None) -> str:
    if here is None:
        return f"compute it inside `on {there} {{ ... }}`"
    return f"send it first: {name}_in = send({name}, {there.group}, {here.block - there.block})"
