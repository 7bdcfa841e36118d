"""What the runner's `auto` picks on an input: `boostfsm analyze --input` asks the machine's
own runner (the project `boostfsm run` builds, cached by content), so that the scheme it
prints is the one the runtime picks on that input, by the same rules and probes
(cpp_runtime/fsm/auto/probe.hpp), with the same default thread count."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from parafuse.cli.errors import UsageError
from parafuse.emitters.fsm.project import ProjectRequest, cached_project
from parafuse.emitters.toolchain.openmp import runner_environment
from parafuse.fsm_compiler.compiled import CompiledMachine
from parafuse.fsm_compiler.pipeline import analyse_for_project


def runner_for(machine: CompiledMachine, source_name: str) -> Path:
    """The machine's runner, built (or found in the cache) as `boostfsm run` builds it."""
    project = cached_project(ProjectRequest(machine, source_name,
                                            analyse_for_project(machine, None)))
    return project / "build" / f"{machine.name}_run"


def runtime_choice(machine: CompiledMachine, source_name: str, input_path: str) -> tuple[str, str]:
    """(scheme, reason) of the runner's `auto` over the file `input_path`."""
    done = subprocess.run([str(runner_for(machine, source_name)), input_path, "--scheme", "auto",
                           "--json"], capture_output=True, text=True, env=runner_environment())
    if done.returncode != 0:
        raise UsageError(done.stderr.strip() or f"the runner of '{machine.name}' failed")
    payload = json.loads(done.stdout)
    return payload["scheme"], payload["reason"]
