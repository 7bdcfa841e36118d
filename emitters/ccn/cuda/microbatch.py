"""`microbatch(FIRST, LAST)` on the GPU: a loop over the micro-batches, and in it every
stage of the run on the micro-batch's rows, each queued by the ranks of its pipeline stage:
kernels and GEMMs on the compute stream, a collective or a send between stages on the
communication stream after the compute stream's work (and before the compute stream's
next). A stage's ranks queue micro-batch m + 1 as soon as m is queued; NCCL's send to the
next stage completes once that stage receives it. Each part is cut as `overlap` cuts its
producer and consumer (_Chunked), its set-up (a materialised operand) made with each
micro-batch.
"""

from __future__ import annotations

from parafuse.ccn_compiler import ir
from parafuse.emitters.ccn.chunk_policy import ChunkRule, unsupported
from parafuse.emitters.ccn.placement_code import guarded

from .overlap import Chunked
from .stages import CudaStageWriter


def lower_microbatch(stage: ir.MicroBatchStage, writer: CudaStageWriter) -> list[str]:
    policy = writer.plan.chunks[stage.name]
    if policy.rule is not ChunkRule.FIXED:
        raise unsupported(policy, "CUDA", "a micro-batched run")
    program = writer.plan.program
    rows = writer.buffers[stage.parts[0].name].local
    body = [f"const auto [r0, r1] = pf::chunk_rows({rows}.shape[0], chunks, c);"]
    for part in stage.parts:
        local = writer.buffers[part.name].local
        code = ["{", f"  const int64_t lo = r0 * pf::inner_count({local}, 1), "
                f"hi = r1 * pf::inner_count({local}, 1);", "  (void)lo; (void)hi;"]
        if writer.send_blocks(part):  # guards its own two sides
            body += code + ["  " + line for line in writer.send_between(part, ("lo", "hi"))] + \
                ["}"]
            continue
        chunked = Chunked(part, writer)
        work = chunked.chunk()
        if isinstance(part, ir.CollectiveStage):
            work = ["streams_.to_comm();"] + work + ["streams_.to_compute();"]
        code += ["  " + line for line in chunked.setup + work] + ["}"]
        body += guarded(code, program.stage_placement(part))
    head = (f"// {stage.name} = microbatch({stage.parts[0].name}, ..., "
            f"{stage.parts[-1].name}): {policy.count} micro-batches along dim 0")
    return [head, "{", "  PF_HERE();", f"  const int chunks = {policy.count};",
            "  for (int c = 0; c < chunks; ++c) {"] + ["    " + line for line in body] + \
        ["  }", "}"]
