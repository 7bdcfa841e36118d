"""Collectives and `send` across the simulated ranks (docs/ccn-language.md section 7).

Inputs are rounded to the value's dtype, reductions run in its compute dtype in
rank order, and the caller rounds the result when it is bound to its name.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import ir
from ..numerics import rounded
from ..ranks import block_range
from .values import PerRank, World


def _reduce(op: str, values: list[np.ndarray]) -> np.ndarray:
    total = values[0]
    for value in values[1:]:
        if op in ("sum", "avg"):
            total = total + value
        elif op == "prod":
            total = total * value
        elif op == "max":
            total = np.maximum(total, value)
        else:
            total = np.minimum(total, value)
    if op == "avg":
        total = total / total.dtype.type(len(values))
    return np.asarray(total)


def _contributors(stage: ir.CollectiveStage, world: World, rank: int) -> list[int]:
    """Ranks whose values an allreduce combines for `rank`.

    A `local` input contributes once per rank of the block. An input replicated in a
    finer group contributes once per block of that group (its first rank): this is the
    second level of a hierarchical reduction.
    """
    members = world.topology.members(stage.group, rank)
    inner = stage.operand.type.layout
    if inner.kind == "replicated" and inner.group is not None:
        return [m for m in members if world.topology.index_in_block(inner.group, m) == 0]
    return members


def _reduced_once(op: str, xs: PerRank) -> Callable[[list[int]], np.ndarray]:
    """`_reduce` of the values of a list of ranks, computed once per distinct list (every
    rank of a block asks for the same one: without this, R ranks cost R^2 additions)."""
    done: dict[tuple[int, ...], np.ndarray] = {}

    def reduced(ranks: list[int]) -> np.ndarray:
        key = tuple(ranks)
        if key not in done:
            done[key] = _reduce(op, [xs[m] for m in ranks])
        return done[key].copy()  # each rank owns its result

    return reduced


def allreduce(stage: ir.CollectiveStage, xs: PerRank, world: World) -> PerRank:
    reduced = _reduced_once(stage.reduce_op, xs)
    return [reduced(_contributors(stage, world, r)) for r in range(world.ranks)]


def reducescatter(stage: ir.CollectiveStage, xs: PerRank, world: World) -> PerRank:
    reduced = _reduced_once(stage.reduce_op, xs)
    out = []
    for rank in range(world.ranks):
        members = world.topology.members(stage.group, rank)
        whole = reduced(members)
        start, stop = block_range(whole.shape[0], len(members),
                                  world.topology.index_in_block(stage.group, rank))
        out.append(whole[start:stop])
    return out


def allgather(stage: ir.CollectiveStage, xs: PerRank, world: World) -> PerRank:
    dim = stage.operand.type.layout.dim
    return [np.concatenate([xs[m] for m in world.topology.members(stage.group, r)], axis=dim)
            for r in range(world.ranks)]


def broadcast(stage: ir.CollectiveStage, xs: PerRank, world: World) -> PerRank:
    return [xs[world.topology.members(stage.group, r)[stage.root]] for r in range(world.ranks)]


def send(stage: ir.CollectiveStage, xs: PerRank, world: World) -> PerRank:
    """Rank i of block b receives the value of rank i of block (b - shift) mod K."""
    topo = world.topology
    blocks = topo.group_blocks[stage.group]
    size = topo.block_size(stage.group)
    out = []
    for rank in range(world.ranks):
        source_block = (topo.block_of(stage.group, rank) - stage.shift) % blocks
        out.append(xs[source_block * size + topo.index_in_block(stage.group, rank)])
    return out


COLLECTIVES = {"allreduce": allreduce, "reducescatter": reducescatter, "allgather": allgather,
               "broadcast": broadcast, "send": send}


def run_collective(stage: ir.CollectiveStage, xs: PerRank, world: World) -> PerRank:
    inputs = [rounded(x, stage.operand.type.dtype) for x in xs]
    with np.errstate(all="ignore"):
        return COLLECTIVES[stage.op](stage, inputs, world)
