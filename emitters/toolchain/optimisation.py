"""The optimisation level a user or the test suite asks of every generated project."""

from __future__ import annotations

import os

from parafuse.grammar.diagnostics import CompileError

# $PARAFUSE_OPTIMIZE: one optimisation level for every unit of every generated project
# (each project's own levels otherwise, -O3 for the code that runs the steps), e.g. -O1
# where builds are checked for their results rather than their speed, as the test suite does
OPTIMIZE_VARIABLE = "PARAFUSE_OPTIMIZE"
OPTIMIZATION_LEVELS = ("-O0", "-O1", "-O2", "-O3", "-Os", "-Og")


def optimisation_args() -> list[str]:
    """The CMake argument that passes $PARAFUSE_OPTIMIZE to a project, checked."""
    level = os.environ.get(OPTIMIZE_VARIABLE, "")
    if not level:
        return []
    if level not in OPTIMIZATION_LEVELS:
        raise CompileError(f"{OPTIMIZE_VARIABLE}={level!r} is not an optimisation level "
                           f"(one of {', '.join(OPTIMIZATION_LEVELS)}, or empty)", None)
    return [f"-D{OPTIMIZE_VARIABLE}={level}"]
