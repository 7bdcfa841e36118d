"""Lower simple stages of the scheduled IR to CUDA host code and device lambdas.

The index mapping and the expression printer are the CPU backend's (LoopSpace,
cpp_expr): inside `step`, every buffer is a device pointer `v_<name>` and every
block shape a `pf::DevLocal` `L_<name>` held in locals, so a `[=] __device__`
lambda captures them by value. An element-wise stage is one grid-stride kernel
(`pf::launch`); a scalar reduction is a block reduction combined with atomics,
then an NCCL allreduce of the accumulator for a sliced operand; collectives are
the NCCL wrappers of cpp_runtime/ccn_cuda/nccl_util.cuh on the communication
stream; `matmul` is cuBLASLt on the operands' own dtype (f32, bf16, f16), with the
epilogue the plan gives it, else (mixed, integer, f64 operands) cuBLAS in float or double.
"""

from __future__ import annotations

from collections.abc import Callable

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.types import ValueType
from parafuse.emitters.ccn.attention import Attention
from parafuse.emitters.ccn.cpp_expr import STORAGE, ExprContext, compute_type, cpp_expr
from parafuse.emitters.ccn.gemm_operands import (
    NATIVE,
    gemm_comment,
    gemm_in_dtype,
    gemm_operands,
    gemm_target,
    writes_direct,
)
from parafuse.emitters.ccn.loop_space import LoopSpace, expr_context
from parafuse.emitters.ccn.plan import Buffer, CommKind, Communicator, group_id
from parafuse.emitters.ccn.stage_writer import (
    REDUCE_OPS,
    StageWriter,
    accumulator_type,
    local_expr,
    reduce_identity,
)
from parafuse.emitters.names import prefixed_stem

from .folded_reductions import FoldedSum, PhaseSums
from .vector import vector_loop


def device_loop(space: LoopSpace, body: Callable[[ExprContext], list[str]],
                precomputed: dict[int, str], lo: str = "0", hi: str | None = None,
                sums: PhaseSums | None = None) -> list[str]:
    """One generated kernel: body(i) for i in [lo, hi) of the space's block, grid-stride;
    with `sums`, the body also adds into `sums[k]` (ccn/cuda/summing.cuh)."""
    hi = hi or f"{space.local}.count"
    inner = body(expr_context(space, precomputed))
    if sums is None:
        lines = [f"pf::launch({lo}, {hi}, streams_.compute, [=] __device__(int64_t i) {{"]
    else:
        lines = [f"pf::launch_summing<{len(sums.sums)}>({lo}, {hi}, streams_.compute, {sums.var}, "
                 f"[=] __device__(int64_t i, {sums.acc}* sums) {{"]
    lines += ["  " + line for line in space.coordinate_lines() + inner]
    return lines + ["});"]


def device_store(space: LoopSpace, target: Buffer, expr: ir.Expr, precomputed: dict[int, str],
                 lo: str = "0", hi: str | None = None) -> list[str]:
    """target[i] = expr rounded to the target's dtype, for i in [lo, hi), on the device,
    with 16-byte loads and stores where they apply (vector.py)."""
    def body(ctx: ExprContext) -> list[str]:
        code, _ = cpp_expr(expr, ctx)
        return [ctx.store(target.var, STORAGE[target.type.dtype], code)]
    vectorised = vector_loop(space, body, precomputed, lo, hi or f"{space.local}.count")
    return vectorised or device_loop(space, body, precomputed, lo, hi)


def nccl_comm(group: str | None) -> str:
    """The NCCL communicator member of a group (the world's: None)."""
    return f"nccl_{group_id(group)}_" if group else "nccl_"


def comm_name(comm: Communicator) -> str:
    """The NCCL communicator member of `comm`."""
    if comm.kind is CommKind.CROSS:
        return f"ncross_{prefixed_stem(comm.stage)}_"
    return nccl_comm(comm.group)


def device_local_expr(vt: ValueType, sizes: dict[str, str]) -> str:
    return f"pf::device_local({local_expr(vt, sizes)})"


class CudaStageWriter(StageWriter):
    """StageWriter whose loops are kernels and whose collectives are NCCL calls."""

    hoists_offsets = False  # kernels compute their offsets inline
    stream_arg = ", streams_.compute"

    def __post_init__(self) -> None:
        super().__post_init__()
        # reductions summed by a fused phase's kernel: id(node) -> (sums array, its type, slot)
        self.folded: dict[int, tuple[str, str, FoldedSum]] = {}


    def block(self, local: str, vt: ValueType) -> list[str]:
        """`local`: the shape of this rank's block of `vt`."""
        return [f"const pf::DevLocal {local} = {device_local_expr(vt, self.sizes)};"]

    def temporary(self, var: str, local: str, ctype: str, vt: ValueType) -> list[str]:
        """A step-local device buffer `var` (pointer) of `vt`'s block, shape `local`."""
        return self.block(local, vt) + [f"{ctype}* const {var} = arena_.take<{ctype}>("
                                        f"{local}.count);"]

    def pointer(self, var: str) -> str:
        return var

    def norm_eps(self, node: ir.RowFunction, work: str,
                 done: dict[int, object]) -> tuple[str, list[str]]:
        """An epsilon that reads device memory (a value or reduction of the step) is
        computed by a one-thread kernel into device memory, and the norm kernel reads it
        there; one of literals and params is passed by value."""
        if all(isinstance(n, ir.Const) or (isinstance(n, ir.Ref) and self.buffers[n.name].is_param)
               or not isinstance(n, (ir.Ref, ir.Dropout) + ir.PRECOMPUTED)
               for n in ir.walk(node.eps)):
            return super().norm_eps(node, work, done)
        name = self.fresh("eps")
        eps, _ = cpp_expr(node.eps, self._scalar_context(done))
        return name, [f"{work}* const {name} = arena_.take<{work}>(1);",
                      "pf::launch(0, 1, streams_.compute, [=] __device__(int64_t) {",
                      f"  {name}[0] = static_cast<{work}>({eps});", "});"]

    loop = staticmethod(device_loop)  # kernels instead of OpenMP loops
    store = staticmethod(device_store)

    def _reduce(self, node: ir.Reduce, done: dict[int, object]) -> tuple[str, list[str]]:
        operand = node.operand
        acc_type = accumulator_type(operand.type.dtype)
        name, local = self.fresh("red"), self.fresh("Lr")
        space = self.space(operand.type, local)
        identity = reduce_identity(node.kind, acc_type)
        storage = STORAGE[operand.type.dtype]
        op = "pf::MaxOp()" if node.kind == "amax" else "pf::SumOp()"
        label = operand.name if isinstance(operand, ir.Ref) else "..."
        lines = [f"// {node.kind}({label}){' across ranks' if node.cross_rank else ''}",
                 f"const pf::DevLocal {local} = {device_local_expr(operand.type, self.sizes)};",
                 f"{acc_type}* const {name}_sum = arena_.take<{acc_type}>(1);"]
        ctx = expr_context(space, self.resolve(space, done))
        code, _ = cpp_expr(operand, ctx)
        value = f"static_cast<{acc_type}>(pf::round_to<{storage}>({code}))"
        result = "v * v" if node.kind == "norm" else "v"
        folded = self.folded.get(id(node))
        if folded is not None:  # summed by the kernel of the phase before (folded_reductions.py)
            var, acc_type, fold = folded
            lines = lines[:1] + [f"// summed by the kernel of the phase that reads {label}",
                                 f"{acc_type}* const {name}_sum = {var} + {fold.slot};"]
            combine = fold.combine_group if fold.combined else False
        else:
            lines += [f"pf::reduce<{acc_type}>({local}.count, {identity}, {op}, streams_.compute, "
                      f"{name}_sum, [=] __device__(int64_t i) -> {acc_type} {{"]
            lines += ["  " + line for line in space.coordinate_lines()]
            lines += [f"  const {acc_type} v = {value};", f"  return {result};", "});"]
            combine = operand.type.layout.group if node.cross_rank else False
        if combine is not False:
            nccl_op = "ncclMax" if node.kind == "amax" else "ncclSum"
            lines += ["streams_.to_comm();",
                      f"PF_NCCL(ncclAllReduce({name}_sum, {name}_sum, 1, "
                      f"pf::nccl_type<{acc_type}>(), {nccl_op}, {nccl_comm(combine)}, "
                      "streams_.comm));",
                      "streams_.to_compute();"]
        total = f"sqrt({name}_sum[0])" if node.kind == "norm" else f"{name}_sum[0]"
        ctype = compute_type(node.type.dtype)
        lines += [f"{ctype}* const {name} = arena_.take<{ctype}>(1);",
                  "pf::launch(0, 1, streams_.compute, [=] __device__(int64_t) {",
                  f"  {name}[0] = pf::round_to<{STORAGE[node.type.dtype]}>({total});", "});"]
        return f"{name}[0]", lines

    def send_between(self, stage: ir.CollectiveStage,
                     rows: tuple[str, str] | None = None) -> list[str]:
        """A send between pipeline stages over NCCL, on the communication stream (see
        send_between_code)."""
        target = self.buffers[stage.name]
        source, dest = self.send_blocks(stage)

        def transfer(data: str, offset: str, count: str) -> list[str]:
            return ["streams_.to_comm();",
                    f"pf::send_between<{STORAGE[stage.type.dtype]}>({data}, {target.var}{offset}, "
                    f"{count}, blocks_{group_id(stage.group)}_, {source}, {dest}, nccl_, "
                    "streams_.comm);",
                    "streams_.to_compute();"]
        return self.send_between_code(stage, transfer, rows)

    def collective(self, stage: ir.CollectiveStage) -> list[str]:
        src, lines = self.materialize(stage.operand)
        target = self.buffers[stage.name]
        out, storage = target.var, STORAGE[stage.type.dtype]
        comm = nccl_comm(stage.group)
        op = REDUCE_OPS.get(stage.reduce_op or "sum", "pf::ReduceOp::sum")
        count = f"{target.local}.count"
        s = "streams_.comm"
        if stage.op == "allreduce":
            call = (f"pf::allreduce<{storage}>({src}, {out}, {count}, {op}, "
                    f"{comm_name(self.plan.collective_comm(stage))}, {s});")
        elif stage.op == "reducescatter":
            whole = (self.buffers[stage.operand.name].local if isinstance(stage.operand, ir.Ref)
                     else f"pf::device_local(pf::local_block(pf::host_local({target.local})"
                     ".logical, -1, 1, 0))")
            call = (f"pf::reduce_scatter<{storage}>({src}, {out}, {target.local}.logical[0], "
                    f"pf::inner_count({whole}, 1), {op}, {comm}, {s}, scratch_);")
        elif stage.op == "allgather":
            d = stage.operand.type.layout.dim
            call = (f"pf::allgather_rows<{storage}>({src}, {out}, {target.local}.logical[0], "
                    f"pf::inner_count({target.local}, 1), {comm}, {s}, scratch_);" if d == 0 else
                    f"pf::allgather_dim<{storage}>({src}, {out}, "
                    f"pf::outer_count({target.local}, {d}), {target.local}.logical[{d}], "
                    f"pf::inner_count({target.local}, {d + 1}), {comm}, {s}, scratch_);")
        elif stage.op == "broadcast":
            call = f"pf::broadcast<{storage}>({src}, {out}, {count}, {stage.root}, {comm}, {s});"
        else:
            call = (f"pf::send_shift<{storage}>({src}, {out}, {count}, "
                    f"blocks_{group_id(stage.group)}_, {stage.shift}, nccl_, {s});")
        return ([f"// {stage.name} = {stage.op}(...) on the communication stream"] + lines
                + ["streams_.to_comm();", call, "streams_.to_compute();"])

    def matmul(self, stage: ir.MatmulStage) -> list[str]:
        if not lt_gemm(stage):
            return self.widened_matmul(stage)
        ops = gemm_operands(stage, self)
        target, epilogue_args = gemm_target(stage, self)
        last = len(stage.a.type.shape) - 1
        head = f"// {stage.name} = matmul(...) with cuBLASLt in {ops.in_dtype}"
        lines = [gemm_comment(head, stage, self.plan)] + ops.lines
        if stage.batched:
            return lines + batch_loop(stage, target.local, ops.la, ops.lb) + [
                f"  lt_.gemm(streams_.compute, {ops.a} + at.a, {ops.b} + at.b, "
                f"{target.var} + at.out, {ops.la}.shape[{last - 1}], {ops.la}.shape[{last}], "
                f"{ops.lb}.shape[{len(stage.b.type.shape) - 1}]{epilogue_args});"]
        return lines + [
            f"lt_.gemm(streams_.compute, {ops.a}, {ops.b}, {target.var}, "
            f"pf::outer_count({ops.la}, {last}), {ops.la}.shape[{last}], {ops.lb}.shape[1]"
            f"{epilogue_args});"]

    def attention(self, fusion: Attention) -> list[str]:
        """The fused attention (emitters/ccn/attention.py): one kernel a query row, the
        softmax's operand f(s) a device lambda of the score and its index in s's block."""
        scores = fusion.scores.type
        local = self.fresh("La")
        space = self.space(scores, local)
        rounded = f"pf::round_to<{STORAGE[scores.dtype]}>(pf_score)"
        ctx = expr_context(space, {id(fusion.score_ref): rounded})
        code, _ = cpp_expr(fusion.score_expr, ctx)
        q, k, v = (self.buffers[name] for name in (fusion.q, fusion.k, fusion.v))
        out = self.buffers[fusion.output.name]
        return [f"// {fusion.output.name} = attention: {fusion.scores.name} = matmul(...), "
                f"{fusion.weights.name} = softmax(...) and the product in one kernel, "
                "the scores never stored",
                self.block(local, scores)[0],
                f"pf::attention_rows({q.var}, {k.var}, {v.var}, {out.var}, {q.local}.shape[0], "
                f"{q.local}.shape[1], {k.local}.shape[1], {q.local}.shape[2], {v.local}.shape[2], "
                "streams_.compute, [=] __device__(float pf_score, int64_t i) -> float {",
                *["  " + line for line in space.coordinate_lines()],
                f"  return static_cast<float>({code});", "});"]

    def widened_matmul(self, stage: ir.MatmulStage) -> list[str]:
        """Mixed, integer and f64 operands: widened to float (double) for cuBLAS."""
        work, lines, (a, la), (b, lb) = self.matmul_operands(stage, " with cuBLAS")
        rank_a = len(stage.a.type.shape)
        target = self.buffers[stage.name]
        rows = f"pf::outer_count({la}, {rank_a - 1})"
        if stage.batched:
            lines += [f"{work}* const {a}_out = arena_.take<{work}>({target.local}.count);",
                      *batch_loop(stage, target.local, la, lb),
                      f"  pf::matmul(cublas_, streams_.compute, {a} + at.a, {b} + at.b, "
                      f"{a}_out + at.out, {la}.shape[{rank_a - 2}], {la}.shape[{rank_a - 1}], "
                      f"{lb}.shape[{len(stage.b.type.shape) - 1}]);"]
        else:
            lines += [f"{work}* const {a}_out = arena_.take<{work}>({rows} * {lb}.shape[1]);",
                      f"pf::matmul(cublas_, streams_.compute, {a}, {b}, {a}_out, {rows}, "
                      f"{la}.shape[{rank_a - 1}], {lb}.shape[1]);"]
        return lines + [f"pf::launch(0, {target.local}.count, streams_.compute, "
                        "[=] __device__(int64_t i) {",
                        f"  {target.var}[i] = pf::store_as<{STORAGE[stage.type.dtype]}>"
                        f"({a}_out[i]);",
                        "});"]


def batch_loop(stage: ir.MatmulStage, lout: str, la: str, lb: str) -> list[str]:
    """The head of a loop over the batches of a batched matmul's block (one GEMM each)."""
    return [f"// {stage.name}: one GEMM a batch of this rank's block",
            f"for (const pf::BatchOffsets& at : pf::batch_offsets({lout}, {la}, {lb}))"]


def lt_gemm(stage: ir.MatmulStage) -> bool:
    """Whether cuBLASLt multiplies the operands as they are and writes the result."""
    in_dtype = gemm_in_dtype(stage)
    return in_dtype in NATIVE and writes_direct(stage, in_dtype)


def lower_simple(stage: ir.SimpleStage, writer: CudaStageWriter) -> list[str]:
    if writer.send_blocks(stage):
        body = writer.send_between(stage)
    elif isinstance(stage, ir.CollectiveStage):
        body = writer.collective(stage)
    elif writer.plan.epilogue_producer(stage.name):
        return [f"// {stage.name}: in the epilogue of "
                f"{writer.plan.epilogue_producer(stage.name)}'s GEMM"]
    elif writer.plan.attention_absorbing(stage.name):
        return [f"// {stage.name}: in the fused attention of "
                f"{writer.plan.attention_absorbing(stage.name)}"]
    elif stage.name in writer.plan.attentions:
        body = writer.attention(writer.plan.attentions[stage.name])
    elif isinstance(stage, ir.MatmulStage):
        body = writer.matmul(stage)
    else:
        body = [f"// {stage.name}: one kernel"] + writer.elementwise(stage)
    return ["{", "  PF_HERE();"] + ["  " + line for line in body] + ["}"]
