"""`coconetc run --backend reference`: the runner contract executed by the interpreter."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from .. import ir
from ..comm_volume import bytes_per_rank
from ..ranks import Topology
from .interpreter import run_program
from .runner_io import (
    RunnerInputError,
    check_fits,
    check_folders,
    check_ranks,
    load_tensors,
    parse_params,
    parse_sizes,
    prepare_outputs,
    remove_empty,
    too_big,
    write_outputs,
)
from .values import World

# Times in the --json object to the nanosecond, as the compiled runners print them (%.6f ms)
MS_DIGITS = 6


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


# What numpy raises, besides MemoryError, for an array too large to make.
_NUMPY_TOO_BIG = ("Maximum allowed size exceeded", "array is too big")


def _allocation_error(exc: Exception, sizes: dict[str, int]) -> Exception:
    """The compiled runners' one line for tensors that cannot be allocated; any other
    ValueError is left as it was (a bug, not bad input)."""
    if isinstance(exc, MemoryError) or any(text in str(exc) for text in _NUMPY_TOO_BIG):
        return too_big(sizes)
    return exc


def run_reference(program: ir.Program, schedule: str, options: RunOptions) -> dict:
    """Validate every input, run the steps, write the outputs; return the JSON summary."""
    if options.iters < 1:
        raise RunnerInputError(f"--iters {options.iters}: at least one step is needed")
    if options.warmup < 0:
        raise RunnerInputError(f"--warmup {options.warmup}: must not be negative")
    check_folders(options.inputs, options.outputs, options.random)
    check_ranks(program, options.ranks)
    sizes = parse_sizes(program, options.sizes)
    params = parse_params(program, options.params)
    topology = Topology(options.ranks, {g.name: g.blocks for g in program.groups})
    world = World(topology, sizes, seed=options.seed)
    check_fits(program, world)
    try:
        initial = load_tensors(program, world, options.inputs, options.random)
    except (MemoryError, ValueError) as exc:
        raise _allocation_error(exc, sizes) from None
    created = prepare_outputs(options.outputs) if options.outputs is not None else []
    try:
        result = run_program(program, world, params, initial, options.iters, options.warmup)
    except (MemoryError, ValueError) as exc:
        remove_empty(created)
        raise _allocation_error(exc, sizes) from None
    except BaseException:
        remove_empty(created)  # a failed step leaves no folder behind either
        raise
    if options.outputs is not None:
        write_outputs(program, world, result.results, options.outputs, schedule, created)
    return {
        "program": program.name, "schedule": schedule, "backend": "reference",
        "ranks": options.ranks, "sizes": sizes, "iters": options.iters,
        "warmup": options.warmup, "median_ms": round(statistics.median(result.step_ms), MS_DIGITS),
        "min_ms": round(min(result.step_ms), MS_DIGITS),
        "bytes_per_rank": bytes_per_rank(program, topology, sizes),
    }
