"""Fused collectives and overlapped stages on the CPU: chunked pipelines of
collectives and OpenMP loops.

A fused group `fuse(rs, S..., ag...)` runs, for chunk c of each rank's block:
the reduction of chunk c, the element-wise members on chunk c (one loop,
intermediates in registers), then the gather of chunk c. The collectives are
`pf::ChunkedReduceScatter` and `pf::ChunkedAllgather` (cpp_runtime/ccn/
chunked_collectives.hpp): loads and stores in node-shared memory when the ranks
share a node, MPI's nonblocking collectives otherwise. A member that needs a
scalar reduction of earlier members starts a new phase (docs/ccn-language.md section 8: the work
before the reduction chunk by chunk, the cross-rank reduction, then the rest).
`overlap(P, C)` computes or reduces chunk c of P while C works on chunk c-1.
"""

from __future__ import annotations

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.types import ITEM_SIZE
from parafuse.emitters.ccn.chunk_policy import ChunkPolicy, ChunkRule, unsupported
from parafuse.emitters.ccn.cpp_expr import STORAGE
from parafuse.emitters.ccn.plan import PhaseKind, chunk_collectives, group_id, stage_id
from parafuse.emitters.ccn.stage_writer import REDUCE_OPS

from .loops import element_loop
from .stages import CpuStageWriter, group_comm, lower_simple


def _indent(lines: list[str], depth: int = 1) -> list[str]:
    return ["  " * depth + line for line in lines]


def lower_fused(stage: ir.FusedStage, writer: CpuStageWriter) -> list[str]:
    group = writer.plan.fused[stage.name]
    members = ", ".join(p.name for p in stage.parts)
    if not group.chunkable:
        lines = [f"// {stage.name} = fuse({members}): members are held differently, so the "
                 "group runs as one unit without chunks"]
        return lines + [line for p in stage.parts for line in lower_simple(p, writer)]
    lines = [f"// {stage.name} = fuse({members}): chunked pipeline", "{"]
    for i, phase in enumerate(group.phases):
        if phase.kind is PhaseKind.WHOLE:
            lines += _indent(lower_simple(phase.stages[0], writer))
        else:
            later = [s for p in group.phases[i:] if p.kind is PhaseKind.CHUNKED for s in p.stages]
            gathers = chunk_collectives(tuple(later))[1]
            lines += _indent(["{"] + _indent(_chunk_loop(stage, phase.stages, writer, gathers))
                             + ["}"])
    return lines + ["}"]


def _chunk_count(policy: ChunkPolicy, local: str, dtype: str, shared: str) -> str:
    if policy.rule is ChunkRule.FIXED:
        return str(policy.count)
    if policy.rule is ChunkRule.BY_SIZE:
        return f"pf::fused_auto_chunks({shared}, {local}.count * {ITEM_SIZE[dtype]})"
    raise unsupported(policy, "CPU", "a fused group")


def _chunk_loop(group: ir.FusedStage, stages: tuple[ir.SimpleStage, ...],
                writer: CpuStageWriter, later_gathers: list[ir.CollectiveStage]) -> list[str]:
    """One chunked phase; `later_gathers`: the chunked gathers of this phase and later ones."""
    scatter, gathers = chunk_collectives(stages)
    computed = [s for s in stages if isinstance(s, (ir.ElementwiseStage, ir.UpdateStage))]
    space_of = scatter or (computed[0] if computed else gathers[0].operand)
    local = writer.buffers[space_of.name].local
    lay = writer.buffers[space_of.name].type.layout
    parts = f"parts_{group_id(lay.group)}_" if lay.kind == "sliced" else "1"
    index = f"index_{group_id(lay.group)}_" if lay.kind == "sliced" else "0"
    comm = group_comm(lay.group)
    transport = scatter or (gathers[0] if gathers else None)
    shared = f"x_{stage_id(transport)}_.shared()" if transport else "false"
    policy = writer.plan.chunks[group.name]
    lines = [f"const int chunks = {_chunk_count(policy, local, space_of.type.dtype, shared)};",
             f"const pf::ChunkPlan plan({local}.logical[0], pf::inner_count({local}, 1), "
             f"{parts}, chunks);"]
    loop = [f"const auto [lo, hi] = plan.mine({index}, c);"]
    after = []
    if scatter is not None:
        lines += _scatter_setup(scatter, writer, comm)
        loop.append(f"x_{stage_id(scatter)}_.finish(c);")
        gathered = any(g.group == scatter.group for g in later_gathers)  # the same ranks
        after.append(f"x_{stage_id(scatter)}_.done({'true' if gathered else 'false'});")
    if computed:
        pre, fused_loop = fused_elementwise(computed, writer)
        lines += pre
        loop += fused_loop("lo", "hi")
    for gather in gathers:
        lines.append(_gather_setup(gather, writer, comm, parts))
        x = f"x_{stage_id(gather)}_"
        loop.append(f"{x}.chunk(c, {writer.buffers[gather.operand.name].var}.data());")
        later = "true" if _written_after_start(gather, computed, writer) else "false"
        after.append(f"{x}.finish({later});")
    return lines + ["for (int c = 0; c < chunks; ++c) {"] + _indent(loop) + ["}"] + after


def _written_after_start(gather: ir.CollectiveStage, computed: list[ir.SimpleStage],
                         writer: CpuStageWriter) -> bool:
    """Is the gather's segment written only after its start() in a step? Then its last
    meeting may be waited for at the next start() (pf::ChunkedAllgather::finish)."""
    placed = writer.plan.placements.get(getattr(gather.operand, "name", None)) == gather.name
    return not placed or any(s.name == gather.operand.name for s in computed)


def fused_elementwise(stages: list[ir.SimpleStage], writer: CpuStageWriter):
    """One OpenMP loop computing every stage per element (StageWriter.fused_body).
    Returns the lines that must run before the loop (its reductions) and a function of
    the loop's range."""
    pre, space, resolved, body = writer.fused_body(stages)

    def loop(lo: str, hi: str) -> list[str]:
        space.registers.clear()
        return element_loop(space, body, resolved, lo, hi)
    return pre, loop


def _scatter_setup(scatter: ir.CollectiveStage, writer: CpuStageWriter, comm: str) -> list[str]:
    """Declare the group's reduce-scatter (a member) and start it on this step's input."""
    src, lines = writer.materialize(scatter.operand)
    storage = STORAGE[scatter.type.dtype]
    target = writer.buffers[scatter.name]
    whole = f"{target.local}.logical[0] * pf::inner_count({target.local}, 1)"
    x = f"x_{stage_id(scatter)}_"
    writer.members.append(f"pf::ChunkedReduceScatter<{storage}> {x};")
    writer.constructor.append(f"{x}.setup({comm}, {whole}, {REDUCE_OPS[scatter.reduce_op]});")
    writer.place(scatter.operand, scatter)
    return lines + [f"{x}.start({src}, {target.var}.data(), plan);"]


def _gather_setup(gather: ir.CollectiveStage, writer: CpuStageWriter, comm: str,
                  parts: str) -> str:
    """Declare the group's gather of `gather` (a member) and start it for this step."""
    storage = STORAGE[gather.type.dtype]
    target = writer.buffers[gather.name]
    rows, row = f"{target.local}.logical[0]", f"pf::inner_count({target.local}, 1)"
    x = f"x_{stage_id(gather)}_"
    writer.members.append(f"pf::ChunkedAllgather<{storage}> {x};")
    writer.constructor.append(f"{x}.setup({comm}, ({rows} + {parts} - 1) / {parts} * {row});")
    writer.place(gather.operand, gather)
    return f"{x}.start({target.var}.data(), plan);"
