"""Per-rank values of the reference interpreter and the block reads of docs/ccn-language.md
section 6.

A `PerRank` value is a list with one numpy array per simulated rank, holding
exactly what the layout says that rank holds (its block for `sliced`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import dims
from ..ranks import Topology, block_range
from ..types import Layout, ValueType

PerRank = list[np.ndarray]


@dataclass
class World:
    """What every evaluation needs: the ranks, the sizes, the seed and step."""

    topology: Topology
    sizes: dict[str, int]
    seed: int = 0
    step: int = 0

    @property
    def ranks(self) -> int:
        return self.topology.ranks

    def shape(self, vt: ValueType) -> tuple[int, ...]:
        return tuple(dims.value(d, self.sizes) for d in vt.shape)

    def block(self, layout: Layout, rank: int, n: int) -> tuple[int, int]:
        """The range of a sliced dim of size n that `rank` holds under `layout`."""
        parts = self.topology.block_size(layout.group)
        return block_range(n, parts, self.topology.index_in_block(layout.group, rank))

    def region(self, vt: ValueType, rank: int) -> tuple[slice, ...]:
        """The slice of the logical tensor that `rank` holds."""
        shape = self.shape(vt)
        region = [slice(0, n) for n in shape]
        if vt.layout.kind == "sliced":
            start, stop = self.block(vt.layout, rank, shape[vt.layout.dim])
            region[vt.layout.dim] = slice(start, stop)
        return tuple(region)

    def block_shape(self, vt: ValueType, rank: int) -> tuple[int, ...]:
        """The shape of the block `rank` holds."""
        return tuple(s.stop - s.start for s in self.region(vt, rank))

    def take_blocks(self, whole: np.ndarray, vt: ValueType) -> PerRank:
        """Distribute a whole logical tensor to the ranks by `vt`'s layout."""
        return [np.array(whole[self.region(vt, r)]) for r in range(self.ranks)]


def read_as(values: PerRank, operand: ValueType, result: ValueType, world: World) -> PerRank:
    """A replicated operand read inside a sliced result: each rank reads its block.

    The block is taken along the operand's dim aligned (from the right) with the
    result's sliced dim; an operand without that dim, or with extent 1 there, is read
    whole.
    """
    lay = result.layout
    if operand.layout.kind != "replicated" or lay.kind != "sliced":
        return values
    dim = lay.dim - (len(result.shape) - len(operand.shape))
    if dim < 0 or (operand.shape[dim] == 1 and result.shape[lay.dim] != 1):
        return values  # broadcast along that dim
    out = []
    for rank, value in enumerate(values):
        start, stop = world.block(lay, rank, value.shape[dim])
        index = [slice(None)] * value.ndim
        index[dim] = slice(start, stop)
        out.append(value[tuple(index)])
    return out


def broadcast_to_local(value: np.ndarray, target_shape: tuple[int, ...]) -> np.ndarray:
    return np.array(np.broadcast_to(value, target_shape))
