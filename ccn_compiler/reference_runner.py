"""`coconetc run --backend reference`: the runner contract executed by the interpreter."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from . import ir
from .comm_volume import bytes_per_rank
from .interp_values import World
from .interpreter import run_program
from .ranks import Topology
from .runner_io import (
    RunnerInputError,
    check_ranks,
    load_tensors,
    parse_params,
    parse_sizes,
    prepare_outputs,
    remove_empty,
    write_outputs,
)


@dataclass(frozen=True)
class RunOptions:
    ranks: int
    sizes: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    seed: int = 0
    inputs: str | None = None
    outputs: str | None = None
    iters: int = 1
    warmup: int = 0
    random: bool = False


def run_reference(program: ir.Program, schedule: str, options: RunOptions) -> dict:
    """Validate every input, run the steps, write the outputs; return the JSON summary."""
    if options.iters < 1:
        raise RunnerInputError(f"--iters {options.iters}: at least one step is needed")
    if options.warmup < 0:
        raise RunnerInputError(f"--warmup {options.warmup}: must not be negative")
    check_ranks(program, options.ranks)
    sizes = parse_sizes(program, options.sizes)
    params = parse_params(program, options.params)
    topology = Topology(options.ranks, {g.name: g.blocks for g in program.groups})
    world = World(topology, sizes, seed=options.seed)
    initial = load_tensors(program, world, options.inputs, options.random)
    created = prepare_outputs(options.outputs) if options.outputs is not None else []
    try:
        result = run_program(program, world, params, initial, options.iters, options.warmup)
    except BaseException:
        remove_empty(created)  # a failed step leaves no folder behind either
        raise
    if options.outputs is not None:
        write_outputs(program, world, result.results, options.outputs, schedule, created)
    return {
        "program": program.name, "schedule": schedule, "backend": "reference",
        "ranks": options.ranks, "sizes": sizes, "iters": options.iters,
        "warmup": options.warmup, "median_ms": statistics.median(result.step_ms),
        "min_ms": min(result.step_ms), "bytes_per_rank": bytes_per_rank(program, topology, sizes),
    }
