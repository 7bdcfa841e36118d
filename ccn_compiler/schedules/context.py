"""What the directives of one schedule share while they are applied in order."""

from __future__ import annotations

from dataclasses import dataclass, field

from parafuse.grammar import ccn_ast as ast
from parafuse.grammar.diagnostics import CompileError, Location, Note

from .. import ir
from ..ir_edit import group_of
from ..layout_rules import LayoutConflict
from ..relayout import relayout_program


@dataclass
class ScheduleContext:
    """The program so far, the stages earlier directives removed, and fresh-name counters."""

    program: ir.Program
    removed: dict[str, tuple[str, Location]] = field(default_factory=dict)
    generated: int = 0

    def remove(self, name: str, directive: ast.Directive) -> None:
        """Record that `directive` removed the stage `name` (later lookups cite it)."""
        self.removed[name] = (directive.name, directive.location)

    def fresh_name(self, prefix: str) -> str:
        """A stage name `prefix<k>` not yet taken, for a group bound to no name."""
        taken = {s.name for s in self.program.flat_stages()} | {s.name for s in
                                                                 self.program.stages}
        while True:
            self.generated += 1
            name = f"{prefix}{self.generated}"
            if name not in taken:
                return name

    def relayout(self, directive: ast.Directive, what: str,
                 pending: frozenset[str] = frozenset()) -> ir.Program:
        """The program with layouts inferred again; a conflict is an error at `directive`
        (`pending`: see relayout_program)."""
        try:
            return relayout_program(self.program, pending)
        except LayoutConflict as conflict:
            raise CompileError(f"{directive.name}: {what} is not possible: {conflict.message}",
                               directive.location, hint=conflict.hint) from None


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
