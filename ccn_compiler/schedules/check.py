"""Name-level checks of schedule blocks: the program, the directives, the stages they name.

The rewrites themselves (docs/ccn-language.md section 8) are applied by the schedule passes; this
module only makes sure that a schedule refers to things that exist.
"""

from __future__ import annotations

from dataclasses import dataclass

from parafuse.grammar import ccn_ast as ast
from parafuse.grammar.diagnostics import CompileError, Note

from .. import ir
from ..scope import did_you_mean, reserved_kind
from .registry import DIRECTIVES


@dataclass(frozen=True)
class Schedule:
    """A checked schedule: its AST directives, for the program it names."""

    name: str
    program: str
    directives: tuple[ast.Directive, ...]
    location: object


def _check_argument(arg: ast.Expr | ast.InGroup | ast.KeywordArgument, directive: ast.Directive,
                    known: set[str], prog: ir.Program) -> None:
    """A positional argument names a known stage or state; a keyword is an option."""
    if isinstance(arg, ast.KeywordArgument):
        allowed = DIRECTIVES[directive.name].keywords
        if arg.name.name not in allowed:
            raise CompileError(f"{directive.name}() has no option '{arg.name.name}'",
                               arg.name.location,
                               hint=f"options: {', '.join(allowed)}" if allowed else None)
        return
    if not isinstance(arg, ast.NameRef):
        raise CompileError(f"{directive.name}() takes stage names", arg.location)
    if arg.name not in known:
        raise CompileError(f"unknown stage '{arg.name}' in program '{prog.name}'", arg.location,
                           hint=did_you_mean(arg.name, sorted(known)))


def _program_names(prog: ir.Program) -> set[str]:
    """Every name the program defines: sizes, params, tensors, stages (also those inside
    groups) and groups. A directive binding one of them would capture its references."""
    return (set(prog.size_vars) | {p.name for p in prog.params} | {t.name for t in prog.tensors}
            | {s.name for s in prog.stages} | {s.name for s in prog.flat_stages()}
            | {g.name for g in prog.groups})


def check_schedule(sched: ast.ScheduleAst, programs: dict[str, ir.Program]) -> Schedule:
    """The schedule, once its program, directives, arguments and new names all check."""
    prog = programs.get(sched.program.name)
    if prog is None:
        raise CompileError(f"schedule '{sched.name.name}' is for unknown program "
                           f"'{sched.program.name}'", sched.program.location,
                           hint=did_you_mean(sched.program.name, list(programs)))
    if sched.name.name == "default":
        raise CompileError("'default' names the unscheduled program and cannot be redefined",
                           sched.name.location, hint="choose another schedule name")
    known = {s.name for s in prog.stages} | {t.name for t in prog.tensors if t.role == "state"}
    taken = _program_names(prog) | known
    for directive in sched.directives:
        if directive.name not in DIRECTIVES:
            raise CompileError(f"unknown directive '{directive.name}'",
                               directive.call.function.location,
                               hint=did_you_mean(directive.name, list(DIRECTIVES)) or
                               "directives: " + ", ".join(DIRECTIVES))
        for arg in directive.call.arguments:
            _check_argument(arg, directive, known, prog)
        for target in directive.targets:
            kind = reserved_kind(target.name)
            if kind:
                raise CompileError(f"'{target.name}' is {kind} and cannot name a value",
                                   target.location, hint="choose another name")
            if target.name in taken:
                raise CompileError(f"'{target.name}' is already a name in program "
                                   f"'{prog.name}'", target.location,
                                   hint="names bound by directives must be new")
            known.add(target.name)
            taken.add(target.name)
    return Schedule(sched.name.name, prog.name, sched.directives, sched.location)


def check_schedules(schedules: tuple[ast.ScheduleAst, ...],
                    programs: dict[str, ir.Program]) -> dict[tuple[str, str], Schedule]:
    """Every schedule by (program, schedule name); a name defined twice is an error."""
    checked: dict[tuple[str, str], Schedule] = {}
    first: dict[tuple[str, str], ast.ScheduleAst] = {}
    for sched in schedules:
        key = (sched.program.name, sched.name.name)
        if key in first:
            raise CompileError(f"schedule '{sched.name.name}' for '{sched.program.name}' is "
                               "defined twice", sched.name.location,
                               [Note("first defined here", first[key].name.location)])
        first[key] = sched
        checked[key] = check_schedule(sched, programs)
    return checked
