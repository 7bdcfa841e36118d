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
from dataclasses import replace
from pathlib import Path

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.frontend import CheckedModule
from parafuse.emitters.ccn.backend import ProjectBuilder
from parafuse.emitters.toolchain.cmake import BuildError
from parafuse.emitters.toolchain.mpirun import run_ranks

CHUNK_CHOICES = (1, 4, 16, 64)
ROUNDS = int(os.environ.get("PARAFUSE_TUNE_ROUNDS", "3"))


def with_chunks(program: ir.Program, chunks: int) -> ir.Program:
    """The program with `chunks` on every fused or overlapped stage `tune` left open."""
    stages = tuple(replace(s, chunks=chunks) if isinstance(s, (ir.FusedStage, ir.OverlapStage))
                   and s.chunks is None else s for s in program.stages)
    return replace(program, stages=stages)


def candidates(module: CheckedModule, program: str) -> dict[str, ir.Program]:
    found: dict[str, ir.Program] = {}
    for schedule in module.schedule_names(program):
        scheduled = module.scheduled_program(program, schedule)
        open_groups = [s for s in scheduled.stages
                       if isinstance(s, (ir.FusedStage, ir.OverlapStage)) and s.chunks is None]
        found[schedule] = scheduled  # chunks chosen at run time (pf::fused_auto_chunks)
        if not open_groups:
            continue
        for chunks in CHUNK_CHOICES:
            found[f"{schedule}.c{chunks}"] = with_chunks(scheduled, chunks)
    return found


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
    variants = candidates(module, program)
    progress(f"building {len(variants)} candidates of {program}")
    tuning = build_project(module, program, [], command + " (tuning)", variants=variants,
                           default_schedule="default")
    times: dict[str, list[float]] = {name: [] for name in variants}
    for round_index in range(ROUNDS):
        for k, name in enumerate(variants, 1):
            times[name].append(_time(tuning, program, name, ranks, sizes))
            progress(f"round {round_index + 1}/{ROUNDS} [{k}/{len(variants)}] {name}: "
                     f"{times[name][-1]:.3f} ms")
    medians = {name: statistics.median(t) for name, t in times.items()}
    best = min(medians, key=medians.get)
    if medians[best] >= medians["default"]:
        best = "default"
    extra = {best: variants[best]} if best not in module.schedule_names(program) else {}
    build_project(module, program, module.schedule_names(program), command,
                  out_dir=out_dir, variants=extra, default_schedule=best)
    report = {"program": program, "ranks": ranks, "sizes": list(sizes), "chosen": best,
              "candidates": {name: {"median_ms": medians[name], "runs_ms": times[name]}
                             for name in variants}}
    (out_dir / "tuning.json").write_text(json.dumps(report, indent=2) + "\n")
    return best
