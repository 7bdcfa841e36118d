"""The world of R ranks: the block split rule and the blocks of groups (docs/ccn-language.md
section 1)."""

from __future__ import annotations

from dataclasses import dataclass


def block_range(n: int, parts: int, index: int) -> tuple[int, int]:
    """Indices [start, stop) of block `index` of a dim of size n split into `parts` blocks."""
    b = -(-n // parts) if parts else n
    start = min(index * b, n)
    return start, min(start + b, n)


@dataclass(frozen=True)
class Topology:
    """R ranks and, per group, K contiguous blocks of R/K ranks."""

    ranks: int
    group_blocks: dict[str, int]

    def block_size(self, group: str | None) -> int:
        return self.ranks // self.group_blocks[group] if group else self.ranks

    def members(self, group: str | None, rank: int) -> list[int]:
        """The ranks of the block of `group` that `rank` belongs to, in order."""
        size = self.block_size(group)
        first = (rank // size) * size
        return list(range(first, first + size))

    def index_in_block(self, group: str | None, rank: int) -> int:
        return rank % self.block_size(group)

    def block_of(self, group: str | None, rank: int) -> int:
        return rank // self.block_size(group)

    def holds(self, placement, rank: int) -> bool:
        """Does `rank` hold values placed on `placement` (an ir.Placement; None: every rank)?"""
        return placement is None or self.block_of(placement.group, rank) == placement.block
