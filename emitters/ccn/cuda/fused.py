"""Fused groups on the GPU: fused collectives as chunked pipelines on two streams.

A group `fuse(rs, S..., ag...)` runs phase by phase (the CPU backend's phases: a
member that needs a scalar reduction of earlier members starts a new one). In a
phase with a collective, chunk c of every rank's block is reduce-scattered on the
communication stream; the phase's element-wise members run on chunk c as one
generated kernel on the compute stream once an event says it is reduced; the
gathers of chunk c follow on the communication stream once an event says it is
computed, while chunk c+1 is being reduced (pf::DeviceChunks in pipeline.cuh).
A phase without a collective is one kernel over the whole block.
"""

from __future__ import annotations

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.types import ITEM_SIZE
from parafuse.emitters.ccn.cpp_expr import STORAGE
from parafuse.emitters.ccn.plan import chunk_collectives, group_id
from parafuse.emitters.ccn.stage_writer import REDUCE_OPS

from .stages import CudaStageWriter, device_loop, lower_simple, nccl_comm
from .vector import vector_loop


def _indent(lines: list[str]) -> list[str]:
    return ["  " + line for line in lines]


def _computed(stage: ir.SimpleStage) -> bool:
    return isinstance(stage, (ir.ElementwiseStage, ir.UpdateStage))


def lower_fused(stage: ir.FusedStage, writer: CudaStageWriter) -> list[str]:
    members = ", ".join(p.name for p in stage.parts)
    group = writer.plan.fused[stage.name]
    if not group.chunkable:
        return ([f"// {stage.name} = fuse({members}): members are held differently, so they "
                 "run one after another"]
                + [line for p in stage.parts for line in lower_simple(p, writer)])
    lines = [f"// {stage.name} = fuse({members}): chunked pipeline on two streams"]
    for phase in group.phases:
        kind, stages = phase.kind, list(phase.stages)
        if kind == "whole":
            lines += lower_simple(stages[0], writer)
        elif any(isinstance(s, ir.CollectiveStage) for s in stages):
            lines += ["{", "  PF_HERE();"] + _indent(_pipeline(stage, stages, writer)) + ["}"]
        else:
            pre, kernel = fused_kernel(stages, writer)
            names = ", ".join(s.name for s in stages)
            lines += ["{", f"  // {names}: one kernel", "  PF_HERE();"]
            lines += _indent(pre + kernel()) + ["}"]
    return lines


def _chunk_count(group: ir.FusedStage, local: str, dtype: str) -> str:
    if group.chunks is not None:
        return str(group.chunks)
    return f"pf::auto_chunks({local}.count * {ITEM_SIZE[dtype]})"


def _pipeline(group: ir.FusedStage, stages: list[ir.SimpleStage],
              writer: CudaStageWriter) -> list[str]:
    scatter, gathers = chunk_collectives(tuple(stages))
    computed = [s for s in stages if _computed(s)]
    space_of = scatter or (computed[0] if computed else gathers[0].operand)
    block = writer.buffers[space_of.name]
    lay = block.type.layout
    group_name = group_id(lay.group)
    index = f"index_{group_name}_" if lay.kind == "sliced" else "0"
    parts = f"parts_{group_name}_" if lay.kind == "sliced" else "1"
    comm = nccl_comm(lay.group)
    lines = [f"// {', '.join(s.name for s in stages)}: chunk c reduced, computed, gathered",
             f"const int chunks = {_chunk_count(group, block.local, space_of.type.dtype)};",
             f"const pf::DeviceChunks plan({block.local}.logical[0], "
             f"pf::inner_count({block.local}, 1), {parts}, chunks);"]
    chunk = ["const auto [lo, hi] = plan.plan.mine(" + index + ", c);", "(void)lo; (void)hi;"]
    if scatter is not None:
        lines += _scatter_setup(scatter, writer, block.var, index, comm)
        chunk += ["if (c + 1 < chunks) scatter(c + 1);",
                  "PF_CUDA(cudaStreamWaitEvent(streams_.compute, plan.reduced[c], 0));"]
    if computed:
        pre, kernel = fused_kernel(computed, writer)
        lines += pre
        chunk += kernel("lo", "hi") + [
            "PF_CUDA(cudaEventRecord(plan.computed[c], streams_.compute));",
            "PF_CUDA(cudaStreamWaitEvent(streams_.comm, plan.computed[c], 0));"]
    for n, gather in enumerate(gathers):
        storage = STORAGE[gather.type.dtype]
        source = writer.buffers[gather.operand.name].var
        lines += _buffers(f"ag{n}", storage)
        chunk.append(f"plan.gather<{storage}>({source}, {writer.buffers[gather.name].var}, "
                     f"ag{n}_packed, ag{n}_received, c, {index}, {comm}, streams_.comm);")
    lines.append("streams_.to_comm();")
    if scatter is not None:
        lines.append("scatter(0);")
    loop = ["for (int c = 0; c < chunks; ++c) {"] + _indent(chunk) + ["}"]
    return lines + loop + ["streams_.to_compute();"]


def _scatter_setup(scatter: ir.CollectiveStage, writer: CudaStageWriter, block: str,
                   index: str, comm: str) -> list[str]:
    """The padded buffers and `scatter(c)`, which reduce-scatters chunk c into `block`."""
    src, code = writer.materialize(scatter.operand)
    storage = STORAGE[scatter.type.dtype]
    return code + _buffers("rs", storage) + [
        "auto scatter = [&](int c) {",
        f"  plan.scatter<{storage}>({src}, {block}, rs_packed, rs_received, c, {index}, "
        f"{REDUCE_OPS[scatter.reduce_op]}, {comm}, streams_.comm);", "};"]


def _buffers(prefix: str, storage: str) -> list[str]:
    return [f"pf::StreamBuffer<{storage}> {prefix}_packed_buf(plan.total, streams_.compute);",
            f"pf::StreamBuffer<{storage}> {prefix}_received_buf(plan.total, streams_.compute);",
            f"{storage}* const {prefix}_packed = {prefix}_packed_buf.data();",
            f"{storage}* const {prefix}_received = {prefix}_received_buf.data();"]


def fused_kernel(stages: list[ir.SimpleStage], writer: CudaStageWriter):
    """One kernel computing every stage per element (StageWriter.fused_body). Returns the
    lines that must run first (its reductions) and a function of the kernel's range."""
    pre, space, resolved, body = writer.fused_body(stages)

    def kernel(lo: str = "0", hi: str | None = None) -> list[str]:
        vectorised = vector_loop(space, body, resolved, lo, hi or f"{space.local}.count")
        space.registers.clear()
        return vectorised or device_loop(space, body, resolved, lo, hi)
    return pre, kernel
