"""`overlap(P, C)` on the GPU: P produces chunk c (rows along dim 0) on its stream, an
event marks it done, and C works on chunk c on its own stream once it is; a matmul is
cuBLASLt (cuBLAS for widened operands) on the chunk's rows on the compute stream, a
collective an NCCL call on the communication stream, so C's chunk c overlaps P's chunk
c+1."""

from __future__ import annotations

from parafuse.ccn_compiler import ir
from parafuse.emitters.ccn.chunk_policy import ChunkRule, unsupported
from parafuse.emitters.ccn.cpp_expr import STORAGE
from parafuse.emitters.ccn.gemm_operands import gemm_operands, gemm_target
from parafuse.emitters.ccn.plan import group_id
from parafuse.emitters.ccn.stage_writer import REDUCE_OPS

from .stages import CudaStageWriter, comm_name, lower_simple, lt_gemm


class Chunked:
    """Setup lines, the stream, and the lines of chunk [lo, hi) (elements) of one stage."""

    def __init__(self, stage: ir.SimpleStage, writer: CudaStageWriter,
                 comm_stream: str = "streams_.comm") -> None:
        self.stage, self.writer = stage, writer
        self.setup: list[str] = []
        collective = isinstance(stage, ir.CollectiveStage)
        self.stream = comm_stream if collective else "streams_.compute"
        self.lt = isinstance(stage, ir.MatmulStage) and lt_gemm(stage)
        if self.lt:
            ops = gemm_operands(stage, writer)
            self.a, self.la, self.b, self.lb = ops.a, ops.la, ops.b, ops.lb
            self.setup += ops.lines
            # where the GEMM writes: its own buffer, or its epilogue's consumer's
            self.out, self.epilogue_args = gemm_target(stage, writer)
        elif isinstance(stage, ir.MatmulStage):
            work = "double" if "f64" in (stage.a.type.dtype, stage.b.type.dtype) else "float"
            self.a, self.la, code_a = writer.materialize_as(stage.a, work)
            self.b, self.lb, code_b = writer.materialize_as(stage.b, work)
            out = writer.buffers[stage.name].local
            self.setup += code_a + code_b + [
                f"{work}* const {self.a}_out = arena_.take<{work}>({out}.count);"]

    def chunk(self) -> list[str]:
        stage, target = self.stage, self.writer.buffers[self.stage.name]
        if isinstance(stage, (ir.ElementwiseStage, ir.UpdateStage)):
            with self.writer.rows_of_chunk(stage.type):
                return self.writer.elementwise(stage, "lo", "hi")
        if isinstance(stage, ir.MatmulStage):
            n, k = f"{self.lb}.shape[1]", f"{self.la}.shape[{self.la}.rank - 1]"
            if self.lt:
                return [f"lt_.gemm(streams_.compute, {self.a} + (lo / {n}) * {k}, {self.b}, "
                        f"{self.out.var} + lo, (hi - lo) / {n}, {k}, {n}"
                        f"{self.epilogue_args});"]
            return [f"pf::matmul(cublas_, streams_.compute, {self.a} + (lo / {n}) * {k}, "
                    f"{self.b}, {self.a}_out + lo, (hi - lo) / {n}, {k}, {n});",
                    "pf::launch(lo, hi, streams_.compute, [=] __device__(int64_t i) {",
                    f"  {target.var}[i] = pf::store_as<{STORAGE[stage.type.dtype]}>"
                    f"({self.a}_out[i]);", "});"]
        return [self._collective(stage, target.var, self.stream)]

    def _collective(self, stage: ir.CollectiveStage, out: str, stream: str) -> str:
        storage = STORAGE[stage.type.dtype]
        src = f"{self.writer.buffers[stage.operand.name].var} + lo"
        comm = comm_name(self.writer.plan.collective_comm(stage))
        if stage.op == "allreduce":
            return (f"pf::allreduce<{storage}>({src}, {out} + lo, hi - lo, "
                    f"{REDUCE_OPS[stage.reduce_op]}, {comm}, {stream});")
        if stage.op == "broadcast":
            return (f"pf::broadcast<{storage}>({src}, {out} + lo, hi - lo, {stage.root}, "
                    f"{comm}, {stream});")
        return (f"pf::send_shift<{storage}>({src}, {out} + lo, hi - lo, "
                f"blocks_{group_id(stage.group)}_, {stage.shift}, nccl_, {stream});")


def lower_overlap(stage: ir.OverlapStage, writer: CudaStageWriter) -> list[str]:
    p, c = stage.parts
    head = f"// {stage.name} = overlap({p.name}, {c.name})"
    reason = writer.plan.overlap_reasons[stage.name]
    if reason:
        return [f"{head}: not chunked ({reason})"] + lower_simple(p, writer) + \
            lower_simple(c, writer)
    # two collectives on different communicators overlap on two communication streams (on
    # one communicator NCCL runs its operations in order whatever the streams)
    second = _on_different_communicators(p, c, writer)
    producer = Chunked(p, writer)
    consumer = Chunked(c, writer, "streams_.comm2" if second else "streams_.comm")
    local = writer.buffers[p.name].local
    policy = writer.plan.chunks[stage.name]
    if policy.rule is not ChunkRule.FIXED:
        raise unsupported(policy, "CUDA", "an overlap")
    chunks = str(policy.count)
    body = [f"const auto [r0, r1] = pf::chunk_rows({local}.shape[0], chunks, k);",
            f"const int64_t lo = r0 * pf::inner_count({local}, 1), "
            f"hi = r1 * pf::inner_count({local}, 1);"]
    body += producer.chunk() + [
        f"PF_CUDA(cudaEventRecord(produced.done[k], {producer.stream}));",
        f"PF_CUDA(cudaStreamWaitEvent({consumer.stream}, produced.done[k], 0));"]
    body += consumer.chunk()
    lines = [f"{head}: chunks along dim 0 on two streams", "{", "  PF_HERE();",
             f"  const int chunks = {chunks};", "  pf::ChunkEvents produced(chunks);"]
    lines += ["  " + s for s in producer.setup + consumer.setup]
    lines += ["  streams_.to_comm();"] + (["  streams_.to_comm2();"] if second else [])
    lines += ["  for (int k = 0; k < chunks; ++k) {"]
    lines += ["    " + s for s in body] + ["  }", "  streams_.to_comm();",
                                           "  streams_.to_compute();"]
    return lines + (["  streams_.comm2_to_compute();"] if second else []) + ["}"]


def _on_different_communicators(p: ir.SimpleStage, c: ir.SimpleStage,
                                writer: CudaStageWriter) -> bool:
    if not (isinstance(p, ir.CollectiveStage) and isinstance(c, ir.CollectiveStage)):
        return False
    def comm(stage: ir.CollectiveStage) -> str:
        if stage.op not in ("allreduce", "broadcast"):  # send_shift: the world's communicator
            return "nccl_"
        return comm_name(writer.plan.collective_comm(stage))
    return comm(p) != comm(c)
