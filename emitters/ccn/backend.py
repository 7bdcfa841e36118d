"""The one thing the autotuner and the CLI ask of a backend: build a project.

Both backends (emitters/ccn/cpu/project.py: build_cpu_project; emitters/ccn/cuda/
project.py: tuning_builder) give a function of this shape; with no `out_dir` it builds
into the content-keyed cache. Everything else the backends share is the lowering plan
(plan.py), never each other's modules.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from parafuse.ccn_compiler.frontend import CheckedModule
from parafuse.emitters.ccn.chunk_policy import ChunkVariant


class ProjectBuilder(Protocol):
    def __call__(self, module: CheckedModule, program_name: str, schedules: list[str],
                 command: str, out_dir: Path | None = None,
                 variants: tuple[ChunkVariant, ...] = (),
                 default_schedule: str | None = None) -> Path:
        """The folder of the built project (its runner is DIR/build/P_run)."""
        ...
