"""`microbatch(FIRST, LAST)` on the CPU: a loop over the micro-batches, and in it every
stage of the run on the micro-batch's rows, each guarded by its pipeline stage, so that a
stage's ranks go on to micro-batch m + 1 as soon as they have sent m to the next stage.

A stage's rows [r0, r1) are its elements [r0 * inner, r1 * inner) (dim 0 is never sliced
in a run); each part is cut as `overlap` cuts its producer and consumer (ChunkSteps), its
chunk started and completed before the next part's. What a part computes before its loop
from values of the run (a row norm of them) is computed again with each micro-batch.
"""

from __future__ import annotations

from parafuse.ccn_compiler import ir
from parafuse.emitters.ccn.chunk_policy import ChunkRule, unsupported
from parafuse.emitters.ccn.placement_code import guarded

from .overlap import ChunkSteps
from .stages import CpuStageWriter


def lower_microbatch(stage: ir.MicroBatchStage, writer: CpuStageWriter) -> list[str]:
    policy = writer.plan.chunks[stage.name]
    if policy.rule is not ChunkRule.FIXED:
        raise unsupported(policy, "CPU", "a micro-batched run")
    program = writer.plan.program
    rows = writer.buffers[stage.parts[0].name].local
    body = [f"const auto [r0, r1] = pf::chunk_rows({rows}.shape[0], chunks, c);"]
    made: set[str] = set()
    for index, part in enumerate(stage.parts):
        steps = ChunkSteps(part, writer, index, frozenset(made))
        made.add(part.name)
        local = writer.buffers[part.name].local
        code = ["{", f"  const int64_t lo = r0 * pf::inner_count({local}, 1), "
                f"hi = r1 * pf::inner_count({local}, 1);", "  (void)lo; (void)hi;"]
        requests = steps.request_setup if isinstance(part, ir.CollectiveStage) else []
        code += ["  " + line for line in steps.setup + requests + steps.start()
                 + steps.complete()]
        code.append("}")
        between = writer.send_blocks(part)  # guards its own two sides
        body += code if between else guarded(code, program.stage_placement(part))
    head = (f"// {stage.name} = microbatch({stage.parts[0].name}, ..., "
            f"{stage.parts[-1].name}): {policy.count} micro-batches along dim 0")
    return [head, "{", f"  const int chunks = {policy.count};",
            "  for (int c = 0; c < chunks; ++c) {"] + ["    " + line for line in body] + \
        ["  }", "}"]
