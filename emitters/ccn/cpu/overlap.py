"""`overlap(P, C)` on the CPU: P produces chunk c (rows along dim 0) while C works on
chunk c-1; collectives are completed in order. An allreduce goes through a
`pf::NodeCollective` (node-shared memory on one node, each chunk published and met on
its own; MPI_Iallreduce otherwise), the other collectives are MPI's nonblocking ones.

Chunks: the plan's policy (emitters/ccn/chunk_policy.py): `tune`'s count, else
`pf::OverlapChunks` (ccn/cpu/pipeline.hpp) measures 1, 2 and 4 over the first steps and
keeps the fastest, since a fixed count makes the step slower than not overlapping where
the collective is too small to hide. A matmul chunk goes through gemm.py, in the
operands' dtype."""

from __future__ import annotations

from parafuse.ccn_compiler import ir
from parafuse.emitters.ccn.chunk_policy import ChunkRule, unsupported
from parafuse.emitters.ccn.cpp_expr import STORAGE
from parafuse.emitters.ccn.gemm_operands import gemm_operands
from parafuse.emitters.ccn.loop_space import walk_precomputable
from parafuse.emitters.ccn.plan import group_id, stage_id
from parafuse.emitters.ccn.stage_writer import REDUCE_OPS

from .gemm import gemm_call, store_product
from .loops import store_loop
from .stages import CpuStageWriter, comm_name, group_comm, lower_simple


class ChunkSteps:
    """Code that starts and completes one stage's chunk [lo, hi) (in elements)."""

    def __init__(self, stage: ir.SimpleStage, writer: CpuStageWriter, part: int,
                 chunked: frozenset[str] = frozenset()):
        """`part`: the stage's place in the group (tells its messages apart); `chunked`: the
        values produced chunk by chunk before it."""
        self.stage, self.writer = stage, writer
        self.tag = f"pf::chunk_tag({part}, c)"
        self.setup: list[str] = []
        self.requests = f"req_{stage_id(stage)}"
        # what is computed before a stage's loop (row norms, reductions, moves, a matmul's
        # materialised operand) from a chunked value is computed with each chunk (rows not
        # produced yet are computed too, and never read)
        self.per_chunk = _reads_before_loop(stage, chunked, writer)
        if isinstance(stage, (ir.ElementwiseStage, ir.UpdateStage)) and not self.per_chunk:
            pre, done = writer.precompute([stage.expr])
            target = writer.buffers[stage.name]
            self.space = writer.space(stage.type, target.local)
            self.resolved = writer.resolve(self.space, done)
            self.setup += pre
        elif isinstance(stage, ir.MatmulStage) and not self.per_chunk:
            self.gemm = gemm_call(stage, writer)
            self.setup += self.gemm.lines
        self.node = None
        if isinstance(stage, ir.CollectiveStage) and stage.op == "allreduce":
            self.node = f"nc_{stage_id(stage)}_"
            writer.node_collective(self.node, STORAGE[stage.type.dtype],
                                   comm_name(writer.plan.collective_comm(stage)),
                                   f"{writer.buffers[stage.name].local}.count")
            self.setup.append(f"{self.node}.begin_chunks();")
        # the requests of chunks in flight (MPI's nonblocking collectives)
        self.request_setup = [f"std::vector<MPI_Request> {self.requests}(2 * chunks, "
                              "MPI_REQUEST_NULL);"]

    def progress(self) -> str:
        """Let the chunks in flight move (MPI progresses only inside its calls)."""
        if self.node:
            return f"{self.node}.progress();"
        return f"pf::progress({self.requests});"

    def start(self) -> list[str]:
        stage, target = self.stage, self.writer.buffers[self.stage.name]
        if self.per_chunk and isinstance(stage, ir.MatmulStage):
            gemm = gemm_call(stage, self.writer)
            return gemm.lines + gemm.call("lo", "hi") + store_product(gemm, stage, self.writer,
                                                                      "lo", "hi")
        if self.per_chunk:
            with self.writer.rows_of_chunk(stage.type):
                return self.writer.elementwise(stage, "lo", "hi")
        if self.writer.send_blocks(stage):
            return self.writer.send_between(stage, ("lo", "hi"))
        if isinstance(stage, (ir.ElementwiseStage, ir.UpdateStage)):
            return store_loop(self.space, target, stage.expr, self.resolved, "lo", "hi")
        if isinstance(stage, ir.MatmulStage):
            return self.gemm.call("lo", "hi") + store_product(self.gemm, stage, self.writer,
                                                              "lo", "hi")
        return self._post_collective(stage, target)

    def _post_collective(self, stage: ir.CollectiveStage, target) -> list[str]:
        storage = STORAGE[stage.type.dtype]
        src = f"{self.writer.buffers[stage.operand.name].var}.data() + lo"
        out = f"{target.var}.data() + lo"
        count = "static_cast<int>(hi - lo)"
        first, second = f"&{self.requests}[2 * c]", f"&{self.requests}[2 * c + 1]"
        comm = comm_name(self.writer.plan.collective_comm(stage))
        if self.node:
            base = self.writer.buffers[stage.operand.name].var
            return [f"{self.node}.start_chunk({base}.data(), {target.var}.data(), lo, hi, "
                    f"{REDUCE_OPS[stage.reduce_op]});"]
        if stage.op == "broadcast":
            return [f"std::copy({src}, {src} + (hi - lo), {out});",
                    f"PF_MPI(MPI_Ibcast({out}, {count}, pf::mpi_type<{storage}>(), "
                    f"{stage.root}, {comm}, {first}));"]
        g = group_id(stage.group)
        shift = f"(({stage.shift} % blocks_{g}_) + blocks_{g}_) % blocks_{g}_ * parts_{g}_"
        return [f"if ({shift} == 0) {{ std::copy({src}, {src} + (hi - lo), {out}); }} else {{",
                f"  PF_MPI(MPI_Irecv({out}, {count}, pf::mpi_type<{storage}>(), "
                f"(rank_ - {shift} + ranks_) % ranks_, {self.tag}, comm_, {first}));",
                f"  PF_MPI(MPI_Isend({src}, {count}, pf::mpi_type<{storage}>(), "
                f"(rank_ + {shift}) % ranks_, {self.tag}, comm_, {second}));",
                "}"]

    def complete(self) -> list[str]:
        """Wait for chunk c (elements [lo, hi)); an avg divides it once it is summed."""
        if self.writer.send_blocks(self.stage):
            return []  # sent and received in start()
        if self.node:
            return [f"{self.node}.finish_chunk();"]
        return self._wait(f"2, &{self.requests}[2 * c]", "lo", "hi - lo")

    def complete_all(self, local: str) -> list[str]:
        """Wait for every chunk at once."""
        if self.node:
            return [f"{self.node}.finish_chunks();"]
        return self._wait(f"2 * chunks, {self.requests}.data()", "0", f"{local}.count")

    def _wait(self, requests: str, start: str, count: str) -> list[str]:
        stage = self.stage
        if not isinstance(stage, ir.CollectiveStage):
            return []
        lines = [f"PF_MPI(MPI_Waitall({requests}, MPI_STATUSES_IGNORE));"]
        if stage.reduce_op == "avg":
            target = self.writer.buffers[stage.name]
            lines.append(f"pf::divide_by({target.var}.data() + {start}, {count}, "
                         f"pf::comm_size({comm_name(self.writer.plan.collective_comm(stage))}));")
        return lines


def _reads_before_loop(stage: ir.SimpleStage, chunked: frozenset[str],
                       writer: CpuStageWriter) -> bool:
    """Does what a stage computes before its loop (a row norm, reduction or move; a matmul's
    operand materialised in a temporary) read one of the `chunked` values?"""
    def reads(expr: ir.Expr) -> bool:
        return any(isinstance(n, ir.Ref) and n.name in chunked for n in ir.walk(expr))
    if isinstance(stage, (ir.ElementwiseStage, ir.UpdateStage)):
        return any(reads(pre) for pre in walk_precomputable(stage.expr))
    if isinstance(stage, ir.MatmulStage):
        return reads(stage.a) and bool(gemm_operands(stage, writer).lines)
    return False


def lower_overlap(stage: ir.OverlapStage, writer: CpuStageWriter) -> list[str]:
    p, c = stage.parts
    head = f"// {stage.name} = overlap({p.name}, {c.name})"
    reason = writer.plan.overlap_reasons[stage.name]
    if reason:
        return [f"{head}: not chunked ({reason})"] + lower_simple(p, writer) + \
            lower_simple(c, writer)
    producer = ChunkSteps(p, writer, 0)
    consumer = ChunkSteps(c, writer, 1, frozenset({p.name}))
    local = writer.buffers[p.name].local
    chooser = f"chunks_{stage_id(stage)}_"
    policy = writer.plan.chunks[stage.name]
    if policy.rule is ChunkRule.FIXED:
        chunks, finish = str(policy.count), []
    elif policy.rule is ChunkRule.MEASURED:  # pf::OverlapChunks (ccn/cpu/pipeline.hpp)
        writer.members.append(f"pf::OverlapChunks {chooser};")
        # the ranks that run the overlap agree on the count: a pipeline stage's, or all
        placement = writer.plan.program.stage_placement(stage)
        agree = group_comm(placement.group) if placement else "comm_"
        chunks, finish = f"{chooser}.chunks()", [f"{chooser}.done({agree});"]
    else:
        raise unsupported(policy, "CPU", "an overlap")

    def at(chunk: str, steps: list[str]) -> list[str]:
        return ["{", f"  const int c = {chunk};",
                f"  const auto [r0, r1] = pf::chunk_rows({local}.shape[0], chunks, c);",
                f"  const int64_t lo = r0 * pf::inner_count({local}, 1), "
                f"hi = r1 * pf::inner_count({local}, 1);",
                "  (void)lo; (void)hi;"] + ["  " + s for s in steps] + ["}"]
    body = at("k", producer.start() + [consumer.progress()])
    body += ["if (k > 0) {"] + ["  " + s for s in at("k - 1", producer.complete()
                                                     + consumer.start())] + ["}"]
    lines = [f"{head}: chunks along dim 0", "{", f"  const int chunks = {chunks};"]
    lines += ["  " + s for s in producer.setup + producer.request_setup + consumer.setup
              + consumer.request_setup]
    lines += ["  for (int k = 0; k < chunks; ++k) {"] + ["    " + s for s in body] + ["  }"]
    lines += ["  " + s for s in at("chunks - 1", producer.complete() + consumer.start())]
    lines += ["  " + s for s in consumer.complete_all(local) + finish]
    return lines + ["}"]

