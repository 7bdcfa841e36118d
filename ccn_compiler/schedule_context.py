"""What the directives of one schedule share while they are applied in order."""

from __future__ import annotations

from dataclasses import dataclass, field

from parafuse.grammar import ccn_ast as ast
from parafuse.grammar.diagnostics import CompileError, Location, Note

from . import ir
from .ir_edit import group_of
from .layout_rules import LayoutConflict
from .relayout import relayout_program


@dataclass
class ScheduleContext:
    program: ir.Program
    removed: dict[str, tuple[str, Location]] = field(default_factory=dict)
    generated: int = 0

    def remove(self, name: str, directive: ast.Directive) -> None:
        self.removed[name] = (directive.name, directive.location)

    def fresh_name(self, prefix: str) -> str:
        taken = {s.name for s in self.program.flat_stages()} | {s.name for s in
                                                                 self.program.stages}
        while True:
            self.generated += 1
            name = f"{prefix}{self.generated}"
            if name not in taken:
                return name

    def relayout(self, directive: ast.Directive, what: str) -> ir.Program:
        try:
            return relayout_program(self.program)
        except LayoutConflict as conflict:
            raise CompileError(f"{directive.name}: {what} is not possible: {conflict.message}",
                               directive.location, hint=conflict.hint) from None


def stage_names(directive: ast.Directive) -> list[ast.NameRef]:
    """The positional arguments of a directive, which all name stages or states."""
    return [a for a in directive.call.arguments if isinstance(a, ast.NameRef)]


def require_count(directive: ast.Directive, names: list, least: int, most: int | None,
                  usage: str) -> None:
    if len(names) < least or (most is not None and len(names) > most):
        raise CompileError(f"{directive.name}() takes {usage}", directive.location,
                           hint=f"usage: {_usage(directive.name)}")


def _usage(name: str) -> str:
    return {"split": "rs, ag = split(X)", "reorder": "g1, ... = reorder(AG, S1, ...)",
            "shard": "shard(T, ...)", "fuse": "[f =] fuse(S1, S2, ...)",
            "overlap": "[o =] overlap(P, C)", "tune": "tune(S, chunks = K)"}[name]


def require_targets(directive: ast.Directive, count: int) -> None:
    if len(directive.targets) != count:
        raise CompileError(f"{directive.name}() binds {count} name{'s' if count != 1 else ''}, "
                           f"got {len(directive.targets)}", directive.location,
                           hint=f"usage: {_usage(directive.name)}")


def lookup_stage(ctx: ScheduleContext, ref: ast.NameRef, top_level: bool = True
                 ) -> ir.SimpleStage:
    """The stage `ref` names; errors cite the directive that removed it, or its group."""
    if ref.name in ctx.removed:
        by, where = ctx.removed[ref.name]
        raise CompileError(f"stage '{ref.name}' was removed by an earlier {by}()", ref.location,
                           [Note(f"{by}() removed it here", where)])
    stage = ctx.program.stage(ref.name)
    if stage is None:
        raise CompileError(f"'{ref.name}' is not a stage of program '{ctx.program.name}'",
                           ref.location)
    group = group_of(ctx.program, ref.name)
    if top_level and group is not None:
        raise CompileError(f"stage '{ref.name}' is already part of '{group.name}'",
                           ref.location, [Note("grouped here", group.location)],
                           hint="apply split, reorder and shard before fuse and overlap")
    return stage
