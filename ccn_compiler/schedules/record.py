"""One record per schedule directive: everything the checks and the rewrite need to know.

A directive's record holds its usage line (shown in hints), what its positional
arguments are, how many names it binds, its keyword options, the user-facing
argument check and the rewrite. Each directive's module (`split.py`, ...) defines
its record as `RECORD` beside its three parts, as in exo:

- `check_arguments(directive)`: the user-facing entry's checks of the directive's
  arguments alone (counts, options, names bound), through the record;
- `check_legality(...)`: whether the rewrite is legal on the program at hand;
- the rewrite itself, which returns the new IR (its docstring shows before/after).

`registry.DIRECTIVES` collects the records; nothing else lists directives.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from parafuse.grammar import ccn_ast as ast
from parafuse.grammar.diagnostics import CompileError

from .. import ir
from .context import ScheduleContext

Rewrite = Callable[[ScheduleContext, ast.Directive], ir.Program]


@dataclass(frozen=True)
class Count:
    """How many of something a directive takes: at least `least`, at most `most` (None: any)."""

    least: int
    most: int | None

    def admits(self, count: int) -> bool:
        return count >= self.least and (self.most is None or count <= self.most)


@dataclass(frozen=True)
class DirectiveRecord:
    """A schedule directive: usage, arguments, names bound, checks and rewrite."""

    name: str
    usage: str
    operands: str  # the positional arguments in words: "one allreduce stage"
    operand_count: Count
    target_count: Count
    rewrite: Rewrite
    check_arguments: Callable[[ast.Directive], object]
    keywords: tuple[str, ...] = ()

    def operand_refs(self, directive: ast.Directive) -> list[ast.NameRef]:
        """The positional arguments (stage or state names), after checking their count."""
        names = stage_names(directive)
        if not self.operand_count.admits(len(names)):
            raise CompileError(f"{self.name}() takes {self.operands}", directive.location,
                               hint=f"usage: {self.usage}")
        return names

    def check_targets(self, directive: ast.Directive) -> None:
        """The names on the left of `=`: as many as the directive binds."""
        count, bound = self.target_count, len(directive.targets)
        if count.admits(bound):
            return
        if count.most == 0:
            raise CompileError(f"{self.name}() binds no names", directive.location)
        if count.least == count.most:
            plural = "s" if count.least != 1 else ""
            raise CompileError(f"{self.name}() binds {count.least} name{plural}, got {bound}",
                               directive.location, hint=f"usage: {self.usage}")
        raise CompileError(f"{self.name}() binds at most "
                           f"{'one name' if count.most == 1 else f'{count.most} names'}",
                           directive.location)


def stage_names(directive: ast.Directive) -> list[ast.NameRef]:
    """The positional arguments of a directive, which all name stages or states."""
    return [a for a in directive.call.arguments if isinstance(a, ast.NameRef)]
