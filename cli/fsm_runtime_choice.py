"""What the runner's `auto` picks on a sample: `boostfsm analyze` asks the machine's own
runner (the project `boostfsm run` builds, cached by content), so that the scheme it
prints is the one the runtime picks on that sample, by its rules and probes
(cpp_runtime/fsm/auto/), with the same default thread count: `auto` has that one
implementation."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from parafuse.cli.errors import UsageError
from parafuse.emitters.fsm.project import ProjectRequest, cached_project
from parafuse.emitters.toolchain.openmp import runner_environment
from parafuse.fsm_compiler.compiled import CompiledMachine
from parafuse.fsm_compiler.engines.engines import EngineSet
from parafuse.fsm_compiler.pipeline import analyse_for_project


def runner_for(machine: CompiledMachine | EngineSet, source_name: str) -> Path:
    """The machine's runner, built (or found in the cache) as `boostfsm run` builds it."""
    project = cached_project(ProjectRequest(machine, source_name,
                                            analyse_for_project(machine, None)))
    return project / "build" / f"{machine.name}_run"


def runtime_choice(machine: CompiledMachine | EngineSet, source_name: str,
                   input_path: str) -> tuple[str, str]:
    """(scheme, reason) of the runner's `auto` over the file `input_path`."""
    done = subprocess.run([str(runner_for(machine, source_name)), input_path, "--scheme", "auto",
                           "--json"], capture_output=True, text=True, env=runner_environment())
    if done.returncode != 0:
        raise UsageError(done.stderr.strip() or f"the runner of '{machine.name}' failed")
    payload = json.loads(done.stdout)
    return payload["scheme"], payload["reason"]


# how the set's runtime opens each engine's part of its reason (fsm/sets/engine_set.hpp)
_ENGINE_PART = re.compile(r"engine (\d+) \((\w+), ([^)]+)\): ", re.S)


def engine_choices(engine_set: EngineSet, source_name: str,
                   input_path: str) -> list[tuple[str, str]]:
    """(scheme, reason) of the set runner's `auto` for each engine over `input_path`: the
    runtime runs every engine and says, engine by engine, what it ran and why."""
    _, reason = runtime_choice(engine_set, source_name, input_path)
    parts, starts = [], []
    for number in range(len(engine_set.engines)):
        opening = "engine " if number == 0 else "; engine "
        starts.append(reason.index(f"{opening}{number} (", starts[-1] if starts else 0))
    for number, start in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else len(reason)
        part = reason[start:end].removeprefix("; ")
        found = _ENGINE_PART.match(part)
        if found is None or int(found[1]) != number:
            raise AssertionError(f"engine {number}'s part of the set runner's reason: {part!r}")
        parts.append((found[3], part[found.end():]))
    return parts
