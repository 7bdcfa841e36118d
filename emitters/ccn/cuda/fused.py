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
from parafuse.ccn_compiler.ir_edit import names_read
from parafuse.ccn_compiler.types import ITEM_SIZE
from parafuse.emitters.ccn.chunk_policy import ChunkPolicy, ChunkRule, unsupported
from parafuse.emitters.ccn.cpp_expr import STORAGE, ExprContext, cpp_expr
from parafuse.emitters.ccn.plan import PhaseKind, chunk_collectives, group_id
from parafuse.emitters.ccn.stage_writer import REDUCE_OPS

from .folded_reductions import PhaseSums, phase_sums
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
    summed = phase_sums(group, writer.buffers, writer.fresh)
    for index, phase in enumerate(group.phases):
        kind, stages = phase.kind, list(phase.stages)
        sums = summed.get(index)
        if sums is not None:
            lines += _sums_setup(sums, writer)
        if kind is PhaseKind.WHOLE:
            lines += lower_simple(stages[0], writer)
        elif any(isinstance(s, ir.CollectiveStage) for s in stages):
            lines += ["{", "  PF_HERE();"] + _indent(_pipeline(stage, stages, writer, sums)) + ["}"]
        else:
            pre, kernel = fused_kernel(stages, writer, sums)
            names = ", ".join(s.name for s in stages)
            lines += ["{", f"  // {names}: one kernel", "  PF_HERE();"]
            lines += _indent(pre + kernel()) + ["}"]
    return lines


def _sums_setup(sums: PhaseSums, writer: CudaStageWriter) -> list[str]:
    """The zeroed accumulators of a phase's folded reductions, which the scalar stages
    after it read (folded_reductions.py)."""
    for fold in sums.sums:
        writer.folded[id(fold.node)] = (sums.var, sums.acc, fold)
    labels = ", ".join(f"{fold.node.kind}({fold.node.operand.name})" for fold in sums.sums)
    return [f"// {labels}: summed by the next phase's kernel",
            f"{sums.acc}* const {sums.var} = arena_.take<{sums.acc}>({len(sums.sums)});",
            f"pf::fill({sums.var}, {len(sums.sums)}, {sums.acc}(0), streams_.compute);"]


def _chunk_count(policy: ChunkPolicy, local: str, dtype: str) -> str:
    if policy.rule is ChunkRule.FIXED:
        return str(policy.count)
    if policy.rule is ChunkRule.BY_SIZE:
        return f"pf::auto_chunks({local}.count * {ITEM_SIZE[dtype]})"
    raise unsupported(policy, "CUDA", "a fused group")


def _pipeline(group: ir.FusedStage, stages: list[ir.SimpleStage],
              writer: CudaStageWriter, sums: PhaseSums | None = None) -> list[str]:
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
             f"const int chunks = "
             f"{_chunk_count(writer.plan.chunks[group.name], block.local, space_of.type.dtype)};",
             f"const pf::DeviceChunks plan({block.local}.logical[0], "
             f"pf::inner_count({block.local}, 1), {parts}, chunks);"]
    chunk = ["const auto [lo, hi] = plan.plan.mine(" + index + ", c);", "(void)lo; (void)hi;"]
    src = None
    if scatter is not None:
        src, setup = _scatter_setup(scatter, writer, block.var, index, comm)
        lines += setup
    aliases = _one_rank_aliases(stages, scatter, src, gathers, computed, writer)
    # at one rank the collectives are identities: where every one of them can be, the
    # kernel reads the reduce-scatter's operand and writes the gathered values in place
    collectives = "!one_rank" if aliases is not None else None
    if aliases is not None:
        lines.append(f"const bool one_rank = {parts} == 1;")
    communicate: list[str] = []
    if scatter is not None:
        communicate += ["if (c + 1 < chunks) scatter(c + 1);",
                        "PF_CUDA(cudaStreamWaitEvent(streams_.compute, plan.reduced[c], 0));"]
    chunk += _when(collectives, communicate)
    if computed:
        pre, kernel = fused_kernel(computed, writer, sums)
        lines += pre
        chunk += kernel("lo", "hi")
    gathered: list[str] = []
    if gathers and computed:  # the communication stream waits only where it gathers
        gathered += ["PF_CUDA(cudaEventRecord(plan.computed[c], streams_.compute));",
                     "PF_CUDA(cudaStreamWaitEvent(streams_.comm, plan.computed[c], 0));"]
    for n, gather in enumerate(gathers):
        storage = STORAGE[gather.type.dtype]
        source = writer.buffers[gather.operand.name].var
        lines += _buffers(f"ag{n}", storage)
        gathered.append(f"plan.gather<{storage}>({source}, {writer.buffers[gather.name].var}, "
                        f"ag{n}_packed, ag{n}_received, c, {index}, {comm}, streams_.comm);")
    chunk += _when(collectives, gathered)
    start = ["streams_.to_comm();"] + (["scatter(0);"] if scatter is not None else [])
    lines += _when(collectives, start)
    loop = ["for (int c = 0; c < chunks; ++c) {"] + _indent(chunk) + ["}"]
    if aliases:
        lines += [f"{storage}* const {var}_at = one_rank ? const_cast<{storage}*>({alias}) : {var};"
                  for storage, var, alias in aliases]
        loop = (["{  // at one rank: " + ", ".join(f"{v} is {a}" for _, v, a in aliases)]
                + _indent([f"{storage}* const {var} = {var}_at;" for storage, var, _ in aliases]
                          + loop) + ["}"])
    return lines + loop + _when(collectives, ["streams_.to_compute();"])


def _when(condition: str | None, lines: list[str]) -> list[str]:
    if not lines or condition is None:
        return lines
    return [f"if ({condition}) {{"] + _indent(lines) + ["}"]


def _one_rank_aliases(stages: list[ir.SimpleStage], scatter: ir.CollectiveStage | None,
                      src: str | None, gathers: list[ir.CollectiveStage],
                      computed: list[ir.SimpleStage], writer: CudaStageWriter
                      ) -> list[tuple[str, str, str]] | None:
    """(storage, buffer, the buffer it stands for at one rank) of the reduce-scatter's result
    (its operand) and of each gathered operand (the gathered value), or None where some
    collective of the phase cannot be skipped at one rank: its value is read outside the
    phase or is a result, or the kernel reads memory the alias would write."""
    program, buffers = writer.plan.program, writer.buffers
    inside = {s.name for s in stages}
    outside_reads: set[str] = set()
    for stage in program.flat_stages():
        if stage.name not in inside:
            outside_reads |= names_read(stage)
    results = {v for _, v in program.outputs} | {v for _, v in program.state_updates}
    read_vars = {buffers[n].var for s in computed for n in names_read(s) if n in buffers}
    written_vars = {buffers[s.name].var for s in computed}
    aliases = []
    if scatter is not None:
        if scatter.name in outside_reads | results or src in written_vars:
            return None
        storage = STORAGE[scatter.type.dtype]
        aliases.append((storage, buffers[scatter.name].var, src))
    computed_names = {s.name for s in computed}
    for gather in gathers:
        operand = gather.operand
        if not (isinstance(operand, ir.Ref) and operand.name in computed_names):
            return None
        readers = [s for s in stages if s is not gather and operand.name in names_read(s)]
        target = buffers[gather.name].var
        if operand.name in outside_reads | results or readers or target in read_vars or \
                any(a[1] == buffers[operand.name].var for a in aliases):
            return None
        aliases.append((STORAGE[gather.type.dtype], buffers[operand.name].var, target))
    return aliases


def _scatter_setup(scatter: ir.CollectiveStage, writer: CudaStageWriter, block: str,
                   index: str, comm: str) -> tuple[str, list[str]]:
    """The reduce-scatter's operand, its padded buffers and `scatter(c)`, which
    reduce-scatters chunk c into `block`."""
    src, code = writer.materialize(scatter.operand)
    storage = STORAGE[scatter.type.dtype]
    return src, code + _buffers("rs", storage) + [
        "auto scatter = [&](int c) {",
        f"  plan.scatter<{storage}>({src}, {block}, rs_packed, rs_received, c, {index}, "
        f"{REDUCE_OPS[scatter.reduce_op]}, {comm}, streams_.comm);", "};"]


def _buffers(prefix: str, storage: str) -> list[str]:
    """The padded buffers of a collective (none where the chunks need no packing)."""
    return [f"{storage}* const {prefix}_packed = arena_.take<{storage}>(plan.scratch());",
            f"{storage}* const {prefix}_received = arena_.take<{storage}>(plan.scratch());"]


def fused_kernel(stages: list[ir.SimpleStage], writer: CudaStageWriter,
                 sums: PhaseSums | None = None):
    """One kernel computing every stage per element (StageWriter.fused_body), writing only
    the values something else reads (a result, a state's next value, a value read after
    the kernel); the others live in registers; with `sums`, it also adds up the folded
    reductions of the scalar stages after it. Returns the lines that must run first (its
    reductions) and a function of the kernel's range."""
    program = writer.plan.program
    inside = {s.name for s in stages}
    needed = {v for _, v in program.outputs} | {v for _, v in program.state_updates}
    for stage in program.flat_stages():
        if stage.name not in inside:
            needed |= names_read(stage)
    pre, space, resolved, body = writer.fused_body(stages, inside & needed)

    def summing_body(ctx: ExprContext) -> list[str]:
        lines = body(ctx)
        for fold in sums.sums:
            operand = fold.node.operand
            code, _ = cpp_expr(operand, ctx)
            value = f"static_cast<{sums.acc}>(pf::round_to<{STORAGE[operand.type.dtype]}>({code}))"
            added = "v * v" if fold.node.kind == "norm" else "v"
            lines.append(f"{{ const {sums.acc} v = {value}; sums[{fold.slot}] += {added}; }}")
        return lines

    def kernel(lo: str = "0", hi: str | None = None) -> list[str]:
        code = body if sums is None else summing_body
        vectorised = vector_loop(space, code, resolved, lo, hi or f"{space.local}.count", sums)
        space.registers.clear()
        return vectorised or device_loop(space, code, resolved, lo, hi, sums)
    return pre, kernel
