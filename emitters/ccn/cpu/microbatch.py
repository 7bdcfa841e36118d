"""`microbatch(FIRST, LAST)` on the CPU (the loop: emitters/ccn/microbatch_loop.py): each part
is cut as `overlap` cuts its producer and consumer (ChunkSteps), its chunk started and
completed before the next part's, so that a stage's ranks go on to micro-batch m + 1 as
soon as they have sent m to the next stage. What a part computes before its loop (a row
norm of the run's values) is computed again with each micro-batch."""

from __future__ import annotations

from parafuse.ccn_compiler import ir
from parafuse.emitters.ccn.microbatch_loop import microbatch_loop

from .overlap import ChunkSteps
from .stages import CpuStageWriter


def lower_microbatch(stage: ir.MicroBatchStage, writer: CpuStageWriter) -> list[str]:
    made = [p.name for p in stage.parts]

    def part_code(index: int, part: ir.SimpleStage) -> list[str]:
        producer = writer.plan.epilogue_producer(part.name)
        if producer:
            return [f"// {part.name}: in the epilogue of {producer}'s GEMM"]
        steps = ChunkSteps(part, writer, index, frozenset(made[:index]))
        requests = steps.request_setup if isinstance(part, ir.CollectiveStage) else []
        return steps.setup + requests + steps.start() + steps.complete()
    return microbatch_loop(stage, writer, "CPU", part_code)
