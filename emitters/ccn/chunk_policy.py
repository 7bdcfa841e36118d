"""How many chunks a fused or overlapped stage is cut into: decided once, in the lowering
plan, as a ChunkPolicy per stage, which every backend's printer reads.

`tune(S, chunks = K)` fixes K; a count `tune` leaves open follows the backend's
ChunkDefaults (CPU_CHUNKS in emitters/ccn/cpu/project.py, CUDA_CHUNKS in
emitters/ccn/cuda/project.py)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from parafuse.ccn_compiler import ir


class ChunkRule(Enum):
    FIXED = "fixed"  # a count known when the code is printed
    BY_SIZE = "by size"  # from the step's bytes per rank, at run time
    MEASURED = "measured"  # candidate counts timed over the first steps, the fastest kept


@dataclass(frozen=True)
class ChunkPolicy:
    rule: ChunkRule
    reason: str
    count: int | None = None  # FIXED only


@dataclass(frozen=True)
class ChunkDefaults:
    """A backend's policies for the chunk counts `tune` leaves open."""

    fused: ChunkPolicy
    overlap: ChunkPolicy


@dataclass(frozen=True)
class ChunkVariant:
    """A schedule whose chunk counts `tune` left open are all `chunks` (the autotuner's
    candidates): a schedule class of its own, `SCHEDULE.cK` to the runner's --schedule and
    `Variant_SCHEDULE_cK` in C++, which no schedule's `Schedule_NAME` can be."""

    schedule: str
    chunks: int

    @property
    def name(self) -> str:
        return f"{self.schedule}.c{self.chunks}"

    @property
    def class_name(self) -> str:
        return f"Variant_{self.schedule}_c{self.chunks}"


def tuned(count: int) -> ChunkPolicy:
    return ChunkPolicy(ChunkRule.FIXED, f"tune(..., chunks = {count})", count)


def candidate(count: int) -> ChunkPolicy:
    return ChunkPolicy(ChunkRule.FIXED, f"the autotuner's candidate of {count} chunks", count)


def has_open_chunks(program: ir.Program) -> bool:
    """Whether a fused or overlapped stage of `program` has a chunk count `tune` left open."""
    return any(isinstance(s, ir.FusedStage | ir.OverlapStage) and s.chunks is None
               for s in program.stages)


def chunk_policies(program: ir.Program, defaults: ChunkDefaults,
                   open_count: int | None = None) -> dict[str, ChunkPolicy]:
    """The policy of every fused, overlapped and micro-batched stage of `program`, by stage
    name; with `open_count`, the counts `tune` left open are that (a ChunkVariant's)."""
    found = {}
    for stage in program.stages:
        if isinstance(stage, ir.MicroBatchStage):  # a count the directive always sets
            found[stage.name] = tuned(stage.chunks)
        elif isinstance(stage, ir.FusedStage | ir.OverlapStage):
            default = defaults.fused if isinstance(stage, ir.FusedStage) else defaults.overlap
            if open_count is not None:
                default = candidate(open_count)
            found[stage.name] = default if stage.chunks is None else tuned(stage.chunks)
    return found


def unsupported(policy: ChunkPolicy, backend: str, what: str) -> ValueError:
    """The error of a printer handed a policy its backend cannot print (a bug)."""
    return ValueError(f"the {backend} backend cannot print the chunks of {what} "
                      f"{policy.rule.value} ({policy.reason})")
