"""Bytes each rank sends per step, by the standard ring formulas (for `--json`).

For a block of n ranks and a tensor of B bytes: allreduce 2(n-1)/n B, reducescatter
and allgather (n-1)/n B, broadcast B (the pipelined chain, as nccl-tests' bus
bandwidth counts it), send B. A cross-rank scalar reduction is an allreduce of one
accumulator. The numbers depend on the program only, never on the backend.
"""

from __future__ import annotations

import math

from . import ir
from .ranks import Topology
from .types import ITEM_SIZE


def _elements(vt, sizes: dict[str, int]) -> int:
    return math.prod(sizes[d] if isinstance(d, str) else d for d in vt.shape)


def _collective_bytes(stage: ir.CollectiveStage, topo: Topology, sizes: dict[str, int]) -> float:
    operand = stage.operand.type
    total = _elements(operand, sizes) * ITEM_SIZE[operand.dtype]
    n = topo.block_size(stage.group)
    if stage.op == "allreduce":
        inner = operand.layout
        if inner.kind == "replicated" and inner.group is not None:
            n = topo.group_blocks[inner.group] // (topo.group_blocks[stage.group]
                                                   if stage.group else 1)
        return 2 * (n - 1) / n * total
    if stage.op == "reducescatter":
        return (n - 1) / n * total
    if stage.op == "allgather":
        return (n - 1) / n * total
    if stage.op == "broadcast":
        return total if n > 1 else 0
    blocks = topo.group_blocks[stage.group]
    return total if stage.shift % blocks else 0


def _scalar_reduction_bytes(stage: ir.Stage, topo: Topology) -> float:
    volume = 0.0
    for expr in ir.stage_exprs(stage):
        for node in ir.walk(expr):
            if isinstance(node, ir.Reduce) and node.cross_rank:
                n = topo.block_size(node.operand.type.layout.group)
                acc = 8 if node.operand.type.dtype in ("f64", "i32", "i64") else 4
                volume += 2 * (n - 1) / n * acc
    return volume


def bytes_per_rank(program: ir.Program, topo: Topology, sizes: dict[str, int]) -> int:
    volume = 0.0
    for stage in program.flat_stages():
        if isinstance(stage, ir.CollectiveStage):
            volume += _collective_bytes(stage, topo, sizes)
        volume += _scalar_reduction_bytes(stage, topo)
    return round(volume)
