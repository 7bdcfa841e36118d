"""The loop both backends print for `microbatch(FIRST, LAST)`: one pass a micro-batch, and in
it every part of the run on the micro-batch's rows [r0, r1), which are its elements
[lo, hi) = [r0 * inner, r1 * inner) (dim 0 is never sliced in a run). Each part's code is
guarded by its pipeline stage; a send between stages guards its own two sides."""

from __future__ import annotations

from collections.abc import Callable

from parafuse.ccn_compiler import ir

from .chunk_policy import ChunkRule, unsupported
from .placement_code import guarded
from .stage_writer import StageWriter


def microbatch_loop(stage: ir.MicroBatchStage, writer: StageWriter, backend: str,
                    part_code: Callable[[int, ir.SimpleStage], list[str]],
                    prologue: tuple[str, ...] = ()) -> list[str]:
    """`part_code(index, part)`: a part's lines for the micro-batch `c`, elements [lo, hi)."""
    policy = writer.plan.chunks[stage.name]
    if policy.rule is not ChunkRule.FIXED:
        raise unsupported(policy, backend, "a micro-batched run")
    def block(part: ir.SimpleStage) -> str:
        """The part's block shape: its own, or (a matmul whose GEMM applies its reader in
        its epilogue, and has no buffer) the reader's, the same."""
        epilogue = writer.plan.epilogues.get(part.name)
        return writer.buffers[epilogue.consumer if epilogue else part.name].local

    body = [f"const auto [r0, r1] = pf::chunk_rows({block(stage.parts[0])}.shape[0], chunks, c);"]
    for index, part in enumerate(stage.parts):
        local = block(part)
        code = ["{", f"  const int64_t lo = r0 * pf::inner_count({local}, 1), "
                f"hi = r1 * pf::inner_count({local}, 1);", "  (void)lo; (void)hi;"]
        with writer.rows_of_chunk(part.type):
            code += ["  " + line for line in part_code(index, part)] + ["}"]
        between = writer.send_blocks(part)
        body += code if between else guarded(code, writer.plan.program.stage_placement(part))
    head = (f"// {stage.name} = microbatch({stage.parts[0].name}, ..., "
            f"{stage.parts[-1].name}): {policy.count} micro-batches along dim 0")
    return [head, "{"] + ["  " + line for line in prologue] + [
        f"  const int chunks = {policy.count};", "  for (int c = 0; c < chunks; ++c) {"] + \
        ["    " + line for line in body] + ["  }", "}"]
