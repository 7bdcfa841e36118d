"""Run a program's schedules with the reference interpreter and compare their results.

Results are compared as logical values: a sharded state's per-rank blocks are
joined before they are compared with the default schedule's replicated copies.
"""

from __future__ import annotations

import numpy as np

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.ranks import Topology
from parafuse.ccn_compiler.reference.interpreter import run_program
from parafuse.ccn_compiler.reference.runner_io import load_tensors, parse_params
from parafuse.ccn_compiler.reference.tolerances import assert_close, dependency_dtype
from parafuse.ccn_compiler.reference.values import World


def run_schedule(program: ir.Program, ranks: int, sizes: dict[str, int], iters: int = 3,
                 seed: int = 7) -> tuple[World, dict[str, list[np.ndarray]]]:
    topology = Topology(ranks, {g.name: g.blocks for g in program.groups})
    world = World(topology, sizes, seed=seed)
    params = parse_params(program, ())
    initial = load_tensors(program, world, None, random=True)
    return world, run_program(program, world, params, initial, iters, 0).results


def logical_values(program: ir.Program, world: World, results: dict[str, list[np.ndarray]]
                   ) -> dict[str, list[np.ndarray]]:
    """Per result file name: [whole logical value] (replicated, sliced) or one per rank."""
    out = {}
    for file_name, value_name, vt in program.result_types():
        lay = vt.layout
        holders = [r for r in range(world.ranks)
                   if world.topology.holds(program.placement(value_name), r)]
        per_rank = [results[file_name][r] for r in holders]  # a pipeline stage's ranks only
        if lay.kind == "sliced":
            assert lay.group is None or program.placement(value_name), \
                "comparing group-sliced results is not supported"
            blocks = [results[file_name][m] for m in world.topology.members(lay.group, holders[0])]
            out[file_name] = [np.concatenate(blocks, axis=lay.dim)]
        elif lay.kind == "replicated" and lay.group is None:
            for rank, value in enumerate(per_rank):
                assert np.array_equal(value, per_rank[0], equal_nan=True), \
                    f"{file_name}: rank {rank} differs from rank 0 although replicated"
            out[file_name] = [per_rank[0]]
        else:
            out[file_name] = list(per_rank)
    return out


def assert_same_results(default: ir.Program, scheduled: ir.Program, ranks: int,
                        sizes: dict[str, int], iters: int = 3, what: str = "") -> None:
    world, expected = run_schedule(default, ranks, sizes, iters)
    world2, actual = run_schedule(scheduled, ranks, sizes, iters)
    expected = logical_values(default, world, expected)
    actual = logical_values(scheduled, world2, actual)
    assert set(actual) == set(expected), f"{what}: results {sorted(actual)} vs {sorted(expected)}"
    for file_name, values in expected.items():
        value_name = dict(default.result_names())[file_name]
        dtype = dependency_dtype(default, value_name)
        for rank, (a, b) in enumerate(zip(actual[file_name], values, strict=True)):
            assert_close(a, b, dtype, f"{what} {file_name} (rank {rank})")
