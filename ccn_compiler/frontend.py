"""The front end of coconetc: text -> AST (step 1) -> checked, typed IR (2) -> every
schedule applied (3)."""

from __future__ import annotations

from dataclasses import dataclass

from parafuse.grammar.ccn_ast import ModuleAst
from parafuse.grammar.ccn_parser import parse_ccn
from parafuse.grammar.diagnostics import CompileError, Note

from . import ir
from .check_program import check_program
from .schedules.apply import apply_schedule
from .schedules.check import Schedule, check_schedules
from .scope import did_you_mean


@dataclass(frozen=True)
class CheckedModule:
    filename: str
    programs: dict[str, ir.Program]
    schedules: dict[tuple[str, str], Schedule]  # (program, schedule) -> schedule
    scheduled: dict[tuple[str, str], ir.Program]  # (program, schedule) -> rewritten program

    def program(self, name: str | None) -> ir.Program:
        """The program called `name`, or the only one when `name` is None."""
        if name is None:
            if len(self.programs) != 1:
                listed = ", ".join(self.programs) or "none"
                raise CompileError(f"{self.filename} holds {len(self.programs)} programs "
                                   f"({listed}); choose one with --program", None)
            return next(iter(self.programs.values()))
        if name not in self.programs:
            raise CompileError(f"no program '{name}' in {self.filename}", None,
                               hint=did_you_mean(name, list(self.programs)))
        return self.programs[name]

    def schedule_names(self, program: str) -> list[str]:
        return ["default"] + [s for (p, s) in self.schedules if p == program]

    def scheduled_program(self, program: str, schedule: str) -> ir.Program:
        """The program after `schedule` ("default": unchanged)."""
        if schedule == "default":
            return self.programs[program]
        if (program, schedule) not in self.scheduled:
            raise CompileError(f"program '{program}' has no schedule '{schedule}'", None,
                               hint="schedules: " + ", ".join(self.schedule_names(program)))
        return self.scheduled[(program, schedule)]


def check_programs(module: ModuleAst) -> dict[str, ir.Program]:
    """Step 2: every program of a parsed file as typed, layout-checked IR."""
    programs: dict[str, ir.Program] = {}
    for prog_ast in module.programs:
        name = prog_ast.name.name
        if name in programs:
            raise CompileError(f"program '{name}' is defined twice", prog_ast.name.location,
                               [Note("first defined here", programs[name].location)])
        programs[name] = check_program(prog_ast, module.source)
    return programs


def schedule_programs(module: ModuleAst, programs: dict[str, ir.Program],
                      filename: str) -> CheckedModule:
    """Step 3: every schedule of the file checked and applied to its program."""
    schedules = check_schedules(module.schedules, programs)
    scheduled = {key: apply_schedule(programs[key[0]], sched) for key, sched in schedules.items()}
    return CheckedModule(filename, programs, schedules, scheduled)


def check_source(text: str, filename: str) -> CheckedModule:
    """Parse (step 1), check (2) and schedule (3) a whole .ccn file; raises the first
    CompileError."""
    module = parse_ccn(text, filename)
    return schedule_programs(module, check_programs(module), filename)
