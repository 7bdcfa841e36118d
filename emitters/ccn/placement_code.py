"""Pipeline stages in the generated C++ (docs/ccn-language.md, "Pipeline stages"): which rank
holds a placed value, the guard around a stage's code, and the slot fields the runner reads.

A value placed on block k of group G lives on the ranks `rank_ / parts_G_ == k` only: its
buffer is empty elsewhere, and the code that computes it runs there alone.
"""

from __future__ import annotations

from parafuse.ccn_compiler import ir

from .plan import group_id


def holds(placement: ir.Placement | None) -> str | None:
    """C++ that is true on the ranks of `placement` (None: every rank, no condition)."""
    if placement is None:
        return None
    return f"(rank_ / parts_{group_id(placement.group)}_ == {placement.block})"


def guarded(lines: list[str], placement: ir.Placement | None) -> list[str]:
    """`lines` run on the ranks of `placement` only."""
    condition = holds(placement)
    if condition is None:
        return lines
    return [f"if {condition} {{  // on {placement}"] + ["  " + line for line in lines] + ["}"]


def sized(count: str, placement: ir.Placement | None) -> str:
    """A buffer's element count on this rank: none off its stage."""
    condition = holds(placement)
    return count if condition is None else f"({condition} ? {count} : 0)"


def slot_fields(placement: ir.Placement | None) -> str:
    """The pf::Slot fields after `data`: held, stage, stage_parts, stage_block."""
    if placement is None:
        return ""
    return (f", {holds(placement)}, \"{placement}\", parts_{group_id(placement.group)}_, "
            f"{placement.block}")


def send_blocks(program: ir.Program, stage: ir.CollectiveStage) -> tuple[int, int] | None:
    """(source block, destination block) of a send between pipeline stages; None for a ring
    shift of every block."""
    dest = program.stage_placement(stage)
    if dest is None:
        return None
    return program.send_source(stage).block, dest.block
