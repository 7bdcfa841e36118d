"""`microbatch(FIRST, LAST)` on the GPU (the loop: emitters/ccn/microbatch_loop.py): kernels
and GEMMs on the compute stream, a collective or a send between stages on the
communication stream after the compute stream's work (and before the compute stream's
next). A stage's ranks queue micro-batch m + 1 as soon as m is queued; NCCL's send to the
next stage completes once that stage receives it. Each part is cut as `overlap` cuts its
producer and consumer (Chunked), its set-up (a materialised operand) made with each
micro-batch."""

from __future__ import annotations

from parafuse.ccn_compiler import ir
from parafuse.emitters.ccn.microbatch_loop import microbatch_loop

from .overlap import Chunked
from .stages import CudaStageWriter


def lower_microbatch(stage: ir.MicroBatchStage, writer: CudaStageWriter) -> list[str]:
    def part_code(_index: int, part: ir.SimpleStage) -> list[str]:
        producer = writer.plan.epilogue_producer(part.name)
        if producer:
            return [f"// {part.name}: in the epilogue of {producer}'s GEMM"]
        if writer.send_blocks(part):
            return writer.send_between(part, ("lo", "hi"))
        chunked = Chunked(part, writer)
        work = chunked.chunk()
        if isinstance(part, ir.CollectiveStage):
            work = ["streams_.to_comm();"] + work + ["streams_.to_compute();"]
        return chunked.setup + work
    return microbatch_loop(stage, writer, "CUDA", part_code, prologue=("PF_HERE();",))
