"""Small, pure edits of IR programs that the schedule rewrites are built from."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from . import ir

ExprMap = Callable[[ir.Expr], ir.Expr]


def map_refs(node: ir.Expr, fn: Callable[[ir.Ref, ir.Expr | None], ir.Expr],
             parent: ir.Expr | None = None) -> ir.Expr:
    """Rebuild an expression, replacing every Ref by `fn(ref, parent)`."""
    if isinstance(node, ir.Ref):
        return fn(node, parent)
    if isinstance(node, ir.Const):
        return node
    if isinstance(node, ir.Binary):
        return replace(node, left=map_refs(node.left, fn, node),
                       right=map_refs(node.right, fn, node))
    if isinstance(node, ir.Func):
        return replace(node, args=tuple(map_refs(a, fn, node) for a in node.args))
    if isinstance(node, ir.Dropout):
        return replace(node, operand=map_refs(node.operand, fn, node),
                       p=map_refs(node.p, fn, node))
    if isinstance(node, ir.RowFunction):
        return replace(node, operand=map_refs(node.operand, fn, node),
                       eps=None if node.eps is None else map_refs(node.eps, fn, node))
    return replace(node, operand=map_refs(node.operand, fn, node))


def map_stage_exprs(stage: ir.SimpleStage, fn: ExprMap) -> ir.SimpleStage:
    if isinstance(stage, ir.MatmulStage):
        return replace(stage, a=fn(stage.a), b=fn(stage.b))
    if isinstance(stage, ir.CollectiveStage):
        return replace(stage, operand=fn(stage.operand))
    return replace(stage, expr=fn(stage.expr))


def rename_in_stage(stage: ir.SimpleStage, old: str, new: ir.Expr,
                    keep: Callable[[ir.Expr | None], bool] = lambda parent: False
                    ) -> ir.SimpleStage:
    """Replace reads of `old` by `new`, except where `keep(parent)` holds."""
    def swap(ref: ir.Ref, parent: ir.Expr | None) -> ir.Expr:
        return new if ref.name == old and not keep(parent) else ref
    return map_stage_exprs(stage, lambda e: map_refs(e, swap))


def names_read(stage: ir.Stage) -> set[str]:
    parts = stage.parts if isinstance(stage, ir.GROUPS) else (stage,)
    return {node.name for part in parts for expr in ir.stage_exprs(part)
            for node in ir.walk(expr) if isinstance(node, ir.Ref)}


def readers(program: ir.Program, name: str) -> list[ir.SimpleStage]:
    return [s for s in program.flat_stages() if name in names_read(s)]


def is_used(program: ir.Program, name: str) -> bool:
    """Does any stage, output or state update read `name`?"""
    return bool(readers(program, name)) or any(v == name for _, v in program.outputs) or \
        any(v == name for _, v in program.state_updates)


def map_simple_stages(program: ir.Program,
                      fn: Callable[[ir.SimpleStage], ir.SimpleStage]) -> ir.Program:
    stages = []
    for stage in program.stages:
        if isinstance(stage, ir.GROUPS):
            stages.append(replace(stage, parts=tuple(fn(p) for p in stage.parts)))
        else:
            stages.append(fn(stage))
    return replace(program, stages=tuple(stages))


def replace_top_level(program: ir.Program, name: str,
                      new: tuple[ir.Stage, ...]) -> ir.Program:
    """Put `new` where the top-level stage `name` was."""
    stages: list[ir.Stage] = []
    for stage in program.stages:
        stages.extend(new if stage.name == name else (stage,))
    return replace(program, stages=tuple(stages))


def remove_top_level(program: ir.Program, name: str) -> ir.Program:
    return replace_top_level(program, name, ())


def group_of(program: ir.Program, name: str) -> ir.GroupedStage | None:
    """The group (fused, overlapped, micro-batched) `name` belongs to (or is), if any."""
    for stage in program.stages:
        if isinstance(stage, ir.GROUPS):
            if stage.name == name or any(p.name == name for p in stage.parts):
                return stage
    return None


def depends_on(program: ir.Program) -> dict[str, set[str]]:
    """For each top-level stage, the top-level stages it reads, transitively."""
    owner = {}
    for stage in program.stages:
        parts = stage.parts if isinstance(stage, ir.GROUPS) else (stage,)
        owner.update({p.name: stage.name for p in parts})
    deps: dict[str, set[str]] = {}
    for stage in program.stages:
        direct = {owner[n] for n in names_read(stage) if n in owner} - {stage.name}
        deps[stage.name] = set(direct)
        for d in direct:
            deps[stage.name] |= deps.get(d, set())
    return deps
