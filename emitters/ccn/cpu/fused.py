"""Fused collectives and overlapped stages on the CPU: chunked pipelines of
collectives and OpenMP loops.

A fused group `fuse(rs, S..., ag...)` runs, for chunk c of each rank's block:
the reduction of chunk c, the element-wise members on chunk c (one loop,
intermediates in registers), then the gather of chunk c. The collectives are
`pf::ChunkedReduceScatter` and `pf::ChunkedAllgather` (cpp_runtime/ccn/
chunked_collectives.hpp): loads and stores in node-shared memory when the ranks
share a node, MPI's nonblocking collectives otherwise. A member that needs a
scalar reduction of earlier members starts a new phase (spec section 4: the work
before the reduction chunk by chunk, the cross-rank reduction, then the rest).
`overlap(P, C)` computes or reduces chunk c of P while C works on chunk c-1.
"""

from __future__ import annotations

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.types import ITEM_SIZE
from parafuse.emitters.ccn.cpp_expr import STORAGE
from parafuse.emitters.ccn.cpu.loops import element_loop
from parafuse.emitters.ccn.cpu.stages import REDUCE_OPS, StageWriter


def _indent(lines: list[str], depth: int = 1) -> list[str]:
    return ["  " * depth + line for line in lines]


def _names_read(stage: ir.SimpleStage) -> set[str]:
    return {n.name for e in ir.stage_exprs(stage) for n in ir.walk(e) if isinstance(n, ir.Ref)}


def _precomputes_read(stage: ir.SimpleStage, names: set[str]) -> bool:
    """Does a reduction or row norm of `stage` read one of `names`?"""
    for expr in ir.stage_exprs(stage):
        for node in ir.walk(expr):
            if isinstance(node, (ir.Reduce, ir.RowNorm)):
                if any(isinstance(n, ir.Ref) and n.name in names for n in ir.walk(node)):
                    return True
    return False


def _phases(parts: tuple[ir.SimpleStage, ...]) -> list[tuple[str, list[ir.SimpleStage]]]:
    """("chunked", stages) and ("whole", [stage]) items in execution order."""
    items: list[tuple[str, list[ir.SimpleStage]]] = []
    current: list[ir.SimpleStage] = []
    for part in parts:
        scalar = not part.type.shape
        gather = isinstance(part, ir.CollectiveStage) and part.op == "allgather"
        names = {p.name for p in current}
        if scalar or (gather and not (_names_read(part) & names)):
            if current:
                items.append(("chunked", current))
                current = []
            items.append(("whole", [part]))
        elif current and _precomputes_read(part, names):
            items.append(("chunked", current))
            current = [part]
        else:
            current.append(part)
    if current:
        items.append(("chunked", current))
    return items


def _chunkable(group: ir.FusedStage) -> bool:
    """Members hold the same block (sliced along dim 0, or whole): chunks line up."""
    layouts = {p.type.layout for p in group.parts if p.type.shape and not (
        isinstance(p, ir.CollectiveStage) and p.op == "allgather")}
    if len(layouts) != 1:
        return False
    lay = layouts.pop()
    return lay.kind != "sliced" or lay.dim == 0


def lower_grouped(stage: ir.GroupedStage, writer: StageWriter) -> list[str]:
    if isinstance(stage, ir.OverlapStage):
        from parafuse.emitters.ccn.cpu.overlap import lower_overlap
        return lower_overlap(stage, writer)
    members = ", ".join(p.name for p in stage.parts)
    if not _chunkable(stage):
        from parafuse.emitters.ccn.cpu.program import lower_simple
        lines = [f"// {stage.name} = fuse({members}): members are held differently, so the "
                 "group runs as one unit without chunks"]
        return lines + [line for p in stage.parts for line in lower_simple(p, writer)]
    lines = [f"// {stage.name} = fuse({members}): chunked pipeline", "{"]
    for kind, stages in _phases(stage.parts):
        if kind == "whole":
            from parafuse.emitters.ccn.cpu.program import lower_simple
            lines += _indent(lower_simple(stages[0], writer))
        else:
            lines += _indent(["{"] + _indent(_chunk_loop(stage, stages, writer)) + ["}"])
    return lines + ["}"]


def _chunk_count(group: ir.GroupedStage, local: str, dtype: str, shared: str) -> str:
    if group.chunks is not None:
        return str(group.chunks)
    return f"pf::fused_auto_chunks({shared}, {local}.count * {ITEM_SIZE[dtype]})"


def _chunk_loop(group: ir.FusedStage, stages: list[ir.SimpleStage],
                writer: StageWriter) -> list[str]:
    scatter = next((s for s in stages if isinstance(s, ir.CollectiveStage)
                    and s.op == "reducescatter"), None)
    computed = [s for s in stages if isinstance(s, (ir.ElementwiseStage, ir.UpdateStage))]
    gathers = [s for s in stages if isinstance(s, ir.CollectiveStage) and s.op == "allgather"]
    space_of = scatter or (computed[0] if computed else gathers[0].operand)
    local = writer.buffers[space_of.name].local
    lay = writer.buffers[space_of.name].type.layout
    parts = f"parts_{lay.group or 'world'}_" if lay.kind == "sliced" else "1"
    index = f"index_{lay.group or 'world'}_" if lay.kind == "sliced" else "0"
    comm = f"comm_{lay.group}_" if lay.group else "comm_"
    transport = scatter or (gathers[0] if gathers else None)
    shared = f"x_{transport.name}_.shared()" if transport else "false"
    lines = [f"const int chunks = {_chunk_count(group, local, space_of.type.dtype, shared)};",
             f"const pf::ChunkPlan plan({local}.logical[0], pf::inner_count({local}, 1), "
             f"{parts}, chunks);"]
    loop = [f"const auto [lo, hi] = plan.mine({index}, c);"]
    after = []
    if scatter is not None:
        lines += _scatter_setup(scatter, writer, comm)
        loop.append(f"x_{scatter.name}_.finish(c);")
        after.append(f"x_{scatter.name}_.done();")
    if computed:
        pre, fused_loop = fused_elementwise(computed, writer)
        lines += pre
        loop += fused_loop("lo", "hi")
    for gather in gathers:
        lines.append(_gather_setup(gather, writer, comm, parts))
        loop.append(f"x_{gather.name}_.chunk(c, {writer.buffers[gather.operand.name].var}.data());")
        after.append(f"x_{gather.name}_.finish();")
    return lines + ["for (int c = 0; c < chunks; ++c) {"] + _indent(loop) + ["}"] + after


def fused_elementwise(stages: list[ir.SimpleStage], writer: StageWriter):
    """One OpenMP loop computing every stage per element (StageWriter.fused_body).
    Returns the lines that must run before the loop (its reductions) and a function of
    the loop's range."""
    pre, space, resolved, body = writer.fused_body(stages)

    def loop(lo: str, hi: str) -> list[str]:
        space.registers.clear()
        return element_loop(space, body, resolved, lo, hi)
    return pre, loop


def _scatter_setup(scatter: ir.CollectiveStage, writer: StageWriter, comm: str) -> list[str]:
    """Declare the group's reduce-scatter (a member) and start it on this step's input."""
    src, lines = writer.materialize(scatter.operand)
    storage = STORAGE[scatter.type.dtype]
    target = writer.buffers[scatter.name]
    whole = f"{target.local}.logical[0] * pf::inner_count({target.local}, 1)"
    writer.members.append(f"pf::ChunkedReduceScatter<{storage}> x_{scatter.name}_;")
    writer.constructor.append(f"x_{scatter.name}_.setup({comm}, {whole}, "
                              f"{REDUCE_OPS[scatter.reduce_op]});")
    writer.place(scatter.operand, f"x_{scatter.name}_.segment()")
    return lines + [f"x_{scatter.name}_.start({src}, {target.var}.data(), plan);"]


def _gather_setup(gather: ir.CollectiveStage, writer: StageWriter, comm: str, parts: str) -> str:
    """Declare the group's gather of `gather` (a member) and start it for this step."""
    storage = STORAGE[gather.type.dtype]
    target = writer.buffers[gather.name]
    rows, row = f"{target.local}.logical[0]", f"pf::inner_count({target.local}, 1)"
    writer.members.append(f"pf::ChunkedAllgather<{storage}> x_{gather.name}_;")
    writer.constructor.append(f"x_{gather.name}_.setup({comm}, ({rows} + {parts} - 1) / {parts}"
                              f" * {row});")
    writer.place(gather.operand, f"x_{gather.name}_.segment()")
    return f"x_{gather.name}_.start({target.var}.data(), plan);"
