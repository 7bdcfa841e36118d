"""`coconetc build --autotune`: time every schedule and a few chunk counts, keep the fastest.

Candidates are the program's schedules (the unfused `default` always among them)
and, for schedules with fused or overlapped stages whose chunks `tune` left
open, the runtime's own chunk choice (the schedule's name) and each of
CHUNK_CHOICES. One project holds them all (variants are named `SCHEDULE.cK`);
each is timed by its runner on random inputs in alternating rounds, and the
best median wins, unless it is not faster than `default` in the same
measurements, in which case `default` does. Every candidate's time goes
to DIR/tuning.json; the final project's runner defaults to the winner.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Callable
from pathlib import Path

from parafuse.ccn_compiler.frontend import CheckedModule
from parafuse.emitters.ccn.backend import ProjectBuilder
from parafuse.emitters.ccn.chunk_policy import ChunkVariant, has_open_chunks
from parafuse.emitters.toolchain.cmake import BuildError
from parafuse.emitters.toolchain.mpirun import run_ranks

CHUNK_CHOICES = (1, 4, 16, 64)
ROUNDS = int(os.environ.get("PARAFUSE_TUNE_ROUNDS", "3"))


def candidates(module: CheckedModule, program: str) -> list[str | ChunkVariant]:
    """Every schedule (its chunks as the backend decides them at run time), and for a
    schedule with chunk counts `tune` left open, a variant for each of CHUNK_CHOICES."""
    found: list[str | ChunkVariant] = []
    for schedule in module.schedule_names(program):
        found.append(schedule)
        if has_open_chunks(module.scheduled_program(program, schedule)):
            found += [ChunkVariant(schedule, chunks) for chunks in CHUNK_CHOICES]
    return found


def _name(candidate: str | ChunkVariant) -> str:
    return candidate if isinstance(candidate, str) else candidate.name


def _time(project: Path, program: str, name: str, ranks: int, sizes: tuple[str, ...]) -> float:
    args = ["--schedule", name, "--random", "--warmup", "2", "--iters", "7", "--json"]
    args += [a for size in sizes for a in ("--size", size)]
    done = run_ranks(project, program, ranks, args)
    if done.returncode != 0:
        raise BuildError(f"timing {name} failed: {done.stderr.strip()}")
    return json.loads(done.stdout)["median_ms"]


def autotune(module: CheckedModule, program: str, ranks: int, sizes: tuple[str, ...],
             out_dir: Path, command: str, progress: Callable[[str], None],
             build_project: ProjectBuilder) -> str:
    """Build, time, choose; write the final project to out_dir; return the winner.
    `build_project` is the backend's builder."""
    chosen = candidates(module, program)
    variants = tuple(c for c in chosen if isinstance(c, ChunkVariant))
    names = [_name(c) for c in chosen]
    progress(f"building {len(names)} candidates of {program}")
    tuning = build_project(module, program, [c for c in chosen if isinstance(c, str)],
                           command + " (tuning)", variants=variants, default_schedule="default")
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_index in range(ROUNDS):
        for k, name in enumerate(names, 1):
            times[name].append(_time(tuning, program, name, ranks, sizes))
            progress(f"round {round_index + 1}/{ROUNDS} [{k}/{len(names)}] {name}: "
                     f"{times[name][-1]:.3f} ms")
    medians = {name: statistics.median(t) for name, t in times.items()}
    best = min(medians, key=medians.get)
    if medians[best] >= medians["default"]:
        best = "default"
    build_project(module, program, module.schedule_names(program), command, out_dir=out_dir,
                  variants=tuple(v for v in variants if v.name == best), default_schedule=best)
    report = {"program": program, "ranks": ranks, "sizes": list(sizes), "chosen": best,
              "candidates": {name: {"median_ms": medians[name], "runs_ms": times[name]}
                             for name in names}}
    (out_dir / "tuning.json").write_text(json.dumps(report, indent=2) + "\n")
    return best
