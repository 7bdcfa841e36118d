"""Lower simple stages of the scheduled IR to C++ statements for the CPU backend.

Element-wise and update stages become one OpenMP loop (after the reductions and
row norms they contain, which run first: a local pass, then an MPI_Allreduce of
the partial for a sliced operand). Collectives call the `pf::` wrappers of
cpp_runtime/ccn/mpi_util.hpp; `matmul` the blocked kernel of matmul.hpp.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.types import Layout, ValueType, is_int
from parafuse.emitters.ccn.cpp_expr import STORAGE, compute_type, cpp_expr
from parafuse.emitters.ccn.cpu.loops import (
    Buffer,
    LoopSpace,
    element_loop,
    store_loop,
    walk_precomputable,
)

REDUCE_OPS = {"sum": "pf::ReduceOp::sum", "prod": "pf::ReduceOp::prod",
              "max": "pf::ReduceOp::max", "min": "pf::ReduceOp::min",
              "avg": "pf::ReduceOp::avg"}


def local_expr(vt: ValueType, sizes: dict[str, str]) -> str:
    """C++ building the pf::Local of `vt` on this rank."""
    dims = ", ".join(sizes[d] if isinstance(d, str) else str(d) for d in vt.shape)
    lay = vt.layout
    if lay.kind != "sliced":
        return f"pf::local_block({{{dims}}}, -1, 1, 0)"
    group = lay.group or "world"
    return f"pf::local_block({{{dims}}}, {lay.dim}, parts_{group}_, index_{group}_)"


def comm_of(layout: Layout) -> str:
    return f"comm_{layout.group}_" if layout.group else "comm_"


@dataclass
class StageWriter:
    """Turns stages into C++ lines; keeps the buffers and temporaries they need."""

    buffers: dict[str, Buffer]
    sizes: dict[str, str]  # size variable -> C++ expression
    counter: itertools.count = field(default_factory=itertools.count)
    members: list[str] = field(default_factory=list)  # class members the stages need
    constructor: list[str] = field(default_factory=list)  # and their set-up
    pinned: set[str] = field(default_factory=set)  # swapped at the step's end: std::vector
    placed: set[str] = field(default_factory=set)  # held in a fused collective's segment

    def place(self, expr: ir.Expr, segment: str) -> None:
        """Hold `expr`'s buffer in `segment` (a pointer, or null to stay), if it is a
        value of its own that no state swap moves."""
        if not isinstance(expr, ir.Ref) or expr.name in self.pinned | self.placed or \
                self.buffers[expr.name].is_param:
            return
        self.placed.add(expr.name)
        self.constructor.append(f"{self.buffers[expr.name].var}.place({segment});")

    hoists_offsets = True  # see LoopSpace.hoists

    def space(self, vt: ValueType, local: str) -> LoopSpace:
        return LoopSpace(vt, local, self.buffers.__getitem__, hoists=self.hoists_offsets)

    # -- what a backend changes: temporaries, pointers, loops (the CUDA writer overrides)
    stream_arg = ""  # appended to runtime calls that run on a stream

    def temporary(self, var: str, local: str, ctype: str, vt: ValueType) -> list[str]:
        """A step-local buffer `var` of `vt`'s block, shape `local`."""
        return [f"const pf::Local {local} = {local_expr(vt, self.sizes)};",
                f"std::vector<{ctype}> {var}({local}.count);"]

    def pointer(self, var: str) -> str:
        return f"{var}.data()"

    # The loop over a block's elements, and a value's store: (space, body or target and
    # expr, resolved, lo="0", hi=None) -> lines
    loop = staticmethod(element_loop)
    store = staticmethod(store_loop)

    def fresh(self, prefix: str) -> str:
        return f"{prefix}{next(self.counter)}"

    # -- reductions and row norms that must run before a loop
    def precompute(self, exprs: list[ir.Expr]) -> tuple[list[str], dict[int, object]]:
        lines: list[str] = []
        done: dict[int, object] = {}
        for expr in exprs:
            for node in walk_precomputable(expr):
                if id(node) in done:
                    continue
                if isinstance(node, ir.Reduce):
                    name, code = self._reduce(node, done)
                    lines += code
                    done[id(node)] = name
                else:
                    buf, code = self._row_norm(node, done)
                    lines += code
                    done[id(node)] = buf
        return lines, done

    def resolve(self, space: LoopSpace, done: dict[int, object]) -> dict[int, str]:
        """Codes of precomputed values as read inside `space`'s loop."""
        codes = {}
        for key, value in done.items():
            if isinstance(value, Buffer):
                codes[key] = f"{value.var}[{space.index(value)}]"
            else:
                codes[key] = value
        return codes

    def _reduce(self, node: ir.Reduce, done: dict[int, object]) -> tuple[str, list[str]]:
        operand = node.operand
        acc_type = "double" if operand.type.dtype == "f64" else (
            "int64_t" if is_int(operand.type.dtype) else "float")
        name, local = self.fresh("red"), self.fresh("Lr")
        space = self.space(operand.type, local)
        identity = {"amax": f"-std::numeric_limits<{acc_type}>::infinity()"
                    if acc_type != "int64_t" else "std::numeric_limits<int64_t>::min()"}
        lines = [f"// {node.kind}({'...' if not isinstance(operand, ir.Ref) else operand.name})"
                 f"{' across ranks' if node.cross_rank else ''}",
                 f"const pf::Local {local} = {local_expr(operand.type, self.sizes)};",
                 f"{acc_type} {name}_acc = {identity.get(node.kind, f'{acc_type}(0)')};"]
        storage = STORAGE[operand.type.dtype]

        def body(ctx) -> list[str]:
            code, _ = cpp_expr(operand, ctx)
            value = f"static_cast<{acc_type}>(pf::round_to<{storage}>({code}))"
            if node.kind == "sum":
                return [f"{name}_acc += {value};"]
            if node.kind == "norm":
                return [f"const {acc_type} v = {value};", f"{name}_acc += v * v;"]
            return [f"{name}_acc = std::max({name}_acc, {value});"]
        op = "max" if node.kind == "amax" else "+"
        lines += element_loop(space, body, self.resolve(space, done), reduction=f"{op}:{name}_acc")
        if node.cross_rank:
            mpi_op = "MPI_MAX" if node.kind == "amax" else "MPI_SUM"
            lines.append(f"PF_MPI(MPI_Allreduce(MPI_IN_PLACE, &{name}_acc, 1, "
                         f"pf::mpi_type<{acc_type}>(), {mpi_op}, "
                         f"{comm_of(operand.type.layout)}));")
        total = f"std::sqrt({name}_acc)" if node.kind == "norm" else f"{name}_acc"
        ctype = compute_type(node.type.dtype)
        lines.append(f"const {ctype} {name} = pf::round_to<{STORAGE[node.type.dtype]}>({total});")
        return name, lines

    def _row_norm(self, node: ir.RowNorm, done: dict[int, object]) -> tuple[Buffer, list[str]]:
        work = "double" if node.operand.type.dtype == "f64" else "float"
        var, local = self.fresh("rownorm"), self.fresh("Ln")
        buf = Buffer(var, ValueType("f64" if work == "double" else "f32", node.type.shape,
                                    node.type.layout), local)
        space = self.space(node.operand.type, local)
        eps, _ = cpp_expr(node.eps, self._scalar_context(done))
        storage = STORAGE[node.operand.type.dtype]
        lines = self.temporary(var, local, work, node.type)

        def body(ctx) -> list[str]:
            code, _ = cpp_expr(node.operand, ctx)
            return [f"{var}[i] = static_cast<{work}>(pf::round_to<{storage}>({code}));"]
        lines += self.loop(space, body, self.resolve(space, done))
        last = len(node.type.shape) - 1
        lines.append(f"pf::{node.kind}_rows({self.pointer(var)}, {local}.count, "
                     f"{local}.shape[{last}], static_cast<{work}>({eps}){self.stream_arg});")
        return buf, lines

    def _scalar_context(self, done: dict[int, object]):
        space = LoopSpace(ValueType("f32", (), Layout("replicated")), "L_scalar_",
                          self.buffers.__getitem__)
        from parafuse.emitters.ccn.cpu.loops import expr_context
        return expr_context(space, self.resolve(space, done))

    def fused_body(self, stages: list[ir.SimpleStage]):
        """The parts of one loop computing every stage per element, later stages reading
        earlier ones from registers (rounded to their dtype, as binding rounds them):
        (lines that run first, the loop's space, its precomputed codes, its body)."""
        pre, done = self.precompute([s.expr for s in stages])
        space = self.space(stages[0].type, self.buffers[stages[0].name].local)
        resolved = self.resolve(space, done)

        def body(ctx) -> list[str]:
            lines = []
            for stage in stages:
                target, storage = self.buffers[stage.name], STORAGE[stage.type.dtype]
                code, _ = cpp_expr(stage.expr, ctx)
                register = f"r_{stage.name}"
                lines += [f"const {compute_type(stage.type.dtype)} {register} = "
                          f"pf::round_to<{storage}>({code});",
                          f"{target.var}[i] = pf::store_as<{storage}>({register});"]
                space.registers[stage.name] = register
            return lines
        return pre, space, resolved, body

    # -- stages
    def elementwise(self, stage: ir.ElementwiseStage | ir.UpdateStage, lo: str = "0",
                    hi: str | None = None) -> list[str]:
        target = self.buffers[stage.name]
        pre, done = self.precompute([stage.expr])
        space = self.space(stage.type, target.local)
        return pre + self.store(space, target, stage.expr, self.resolve(space, done), lo, hi)

    def materialize(self, expr: ir.Expr) -> tuple[str, list[str]]:
        """A pointer to `expr`'s values in its own dtype (a buffer, or a new temporary)."""
        if isinstance(expr, ir.Ref) and not self.buffers[expr.name].is_param:
            return self.pointer(self.buffers[expr.name].var), []
        var, local = self.fresh("tmp"), self.fresh("Lt")
        buf = Buffer(var, expr.type, local)
        lines = self.temporary(var, local, STORAGE[expr.type.dtype], expr.type)
        pre, done = self.precompute([expr])
        space = self.space(expr.type, local)
        lines += pre + self.store(space, buf, expr, self.resolve(space, done))
        return self.pointer(var), lines

    def materialize_as(self, expr: ir.Expr, work: str) -> tuple[str, str, list[str]]:
        """A new `work`-typed buffer of `expr` rounded to its dtype: (var, local, lines)."""
        var, local = self.fresh("mm"), self.fresh("Lm")
        lines = self.temporary(var, local, work, expr.type)
        pre, done = self.precompute([expr])
        space = self.space(expr.type, local)
        storage = STORAGE[expr.type.dtype]

        def body(ctx) -> list[str]:
            code, _ = cpp_expr(expr, ctx)
            return [f"{var}[i] = static_cast<{work}>(pf::round_to<{storage}>({code}));"]
        return var, local, lines + pre + self.loop(space, body, self.resolve(space, done))

    def collective(self, stage: ir.CollectiveStage, hierarchical_comm: str | None) -> list[str]:
        src, lines = self.materialize(stage.operand)
        target = self.buffers[stage.name]
        out = f"{target.var}.data()"
        storage = STORAGE[stage.type.dtype]
        op_lay = stage.operand.type.layout
        operand_local = (self.buffers[stage.operand.name].local
                         if isinstance(stage.operand, ir.Ref) else None)
        count = f"{target.local}.count"
        comm = f"comm_{stage.group}_" if stage.group else "comm_"
        if stage.op == "allreduce":
            lines.append(f"pf::allreduce<{storage}>({src}, {out}, {count}, "
                         f"{REDUCE_OPS[stage.reduce_op]}, {hierarchical_comm or comm});")
        elif stage.op == "reducescatter":
            whole = operand_local or f"pf::local_block({target.local}.logical, -1, 1, 0)"
            lines.append(f"pf::reduce_scatter<{storage}>({src}, {out}, {target.local}.logical[0], "
                         f"pf::inner_count({whole}, 1), {REDUCE_OPS[stage.reduce_op]}, {comm});")
        elif stage.op == "allgather":
            lines.append(self._allgather(stage, src, out, op_lay, comm))
        elif stage.op == "broadcast":
            lines.append(f"pf::broadcast<{storage}>({src}, {out}, {count}, {stage.root}, {comm});")
        else:
            lines.append(f"pf::send_shift<{storage}>({src}, {out}, {count}, blocks_{stage.group}_, "
                         f"{stage.shift}, comm_);")
        return [f"// {stage.name} = {stage.op}(...)"] + lines

    def _allgather(self, stage: ir.CollectiveStage, src: str, out: str, op_lay: Layout,
                   comm: str) -> str:
        storage = STORAGE[stage.type.dtype]
        target = self.buffers[stage.name]
        if op_lay.dim == 0:
            return (f"pf::allgather_rows<{storage}>({src}, {out}, {target.local}.logical[0], "
                    f"pf::inner_count({target.local}, 1), {comm});")
        d = op_lay.dim
        return (f"pf::allgather_dim<{storage}>({src}, {out}, pf::outer_count({target.local}, {d}), "
                f"{target.local}.logical[{d}], pf::inner_count({target.local}, {d + 1}), {comm});")

    def matmul_operands(self, stage: ir.MatmulStage, comment: str):
        """Both operands rounded to their dtypes in the work type: (work, lines, (a, local
        of a), (b, local of b)); the backends then multiply them."""
        work = "double" if stage.type.dtype == "f64" or "f64" in (
            stage.a.type.dtype, stage.b.type.dtype) else "float"
        lines = [f"// {stage.name} = matmul(...){comment}"]
        operands = []
        for expr in (stage.a, stage.b):
            var, local, code = self.materialize_as(expr, work)
            lines += code
            operands.append((var, local))
        return work, lines, operands[0], operands[1]

    def matmul(self, stage: ir.MatmulStage) -> list[str]:
        work, lines, (a, la), (b, lb) = self.matmul_operands(stage, "")
        rank_a = len(stage.a.type.shape)
        target = self.buffers[stage.name]
        lines += [f"std::vector<{work}> {a}_out(pf::outer_count({la}, {rank_a - 1}) * "
                  f"{lb}.shape[1]);",
                  f"pf::matmul({a}.data(), {b}.data(), {a}_out.data(), "
                  f"pf::outer_count({la}, {rank_a - 1}), {la}.shape[{rank_a - 1}], {lb}.shape[1]);",
                  f"for (int64_t i = 0; i < {target.local}.count; ++i) "
                  f"{target.var}[i] = pf::store_as<{STORAGE[stage.type.dtype]}>({a}_out[i]);"]
        return lines
