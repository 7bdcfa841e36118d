"""What both backends print alike for a stage: the reductions and row norms that run
before a loop, operands materialised as buffers, and loops that compute several stages
per element. Each backend's writer (emitters/ccn/cpu/stages.py, emitters/ccn/cuda/
stages.py) says how a temporary is held, how a loop is printed (an OpenMP loop or a
kernel), and how reductions, collectives and matmul run.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.dims import cpp as extent_code
from parafuse.ccn_compiler.types import Layout, ValueType, compute_dtype, is_int

from .cpp_expr import STORAGE, ExprContext, compute_type, cpp_expr
from .loop_space import LoopSpace, expr_context, walk_precomputable
from .placement_code import guarded, send_blocks
from .plan import Buffer, LoweringPlan, group_id, sizes_expressions, stage_id

REDUCE_OPS = {"sum": "pf::ReduceOp::sum", "prod": "pf::ReduceOp::prod",
              "max": "pf::ReduceOp::max", "min": "pf::ReduceOp::min",
              "avg": "pf::ReduceOp::avg"}


def accumulator_type(dtype: str) -> str:
    """What a scalar reduction of `dtype` values accumulates in."""
    return "double" if dtype == "f64" else ("int64_t" if is_int(dtype) else "float")


def reduce_identity(kind: str, acc_type: str) -> str:
    """The accumulator's start: 0, or the lowest value for `amax`."""
    if kind != "amax":
        return f"{acc_type}(0)"
    if acc_type == "int64_t":
        return "std::numeric_limits<int64_t>::min()"
    return f"-std::numeric_limits<{acc_type}>::infinity()"


def extent_product(local: str, dims: range) -> str:
    """C++ multiplying the extents `dims` of the block shape `local` (1 for none)."""
    return " * ".join(f"{local}.shape[{d}]" for d in dims) or "1"


def local_expr(vt: ValueType, sizes: dict[str, str]) -> str:
    """C++ building the pf::Local of `vt` on this rank."""
    dims = ", ".join(extent_code(d, sizes) for d in vt.shape)
    lay = vt.layout
    if lay.kind != "sliced":
        return f"pf::local_block({{{dims}}}, -1, 1, 0)"
    group = group_id(lay.group)
    return f"pf::local_block({{{dims}}}, {lay.dim}, parts_{group}_, index_{group}_)"


@dataclass
class StageWriter:
    """Turns stages into C++ lines; keeps the class members the stages need."""

    plan: LoweringPlan
    counter: itertools.count = field(default_factory=itertools.count)
    members: list[str] = field(default_factory=list)  # class members the stages declare
    constructor: list[str] = field(default_factory=list)  # and their set-up

    hoists_offsets = True  # see LoopSpace.hoists
    broadcasts_by_coords = False  # see LoopSpace.broadcast_by_coords
    stream_arg = ""  # appended to runtime calls that run on a stream

    def __post_init__(self) -> None:
        self.buffers: dict[str, Buffer] = self.plan.buffers
        self.sizes: dict[str, str] = sizes_expressions(self.plan.program)
        # while one chunk of rows of a stage is written (rows_of_chunk): the stage's type
        self.rows_of: ValueType | None = None

    @contextmanager
    def rows_of_chunk(self, stage_type: ValueType):
        """While the code of one chunk of rows [r0, r1) of a stage of type `stage_type` is
        written (an overlap's or a micro-batch's part): row norms of values with its rows
        take those rows only."""
        kept, self.rows_of = self.rows_of, stage_type
        try:
            yield
        finally:
            self.rows_of = kept

    def _chunk_rows(self, operand: ValueType, dim: int) -> bool:
        """Are a row function's rows those of the chunk being written (`rows_of`): the same
        rank and dim 0, dim 0 not sliced, and the function not along dim 0?"""
        chunk = self.rows_of
        return chunk is not None and dim != 0 and len(operand.shape) == len(chunk.shape) and \
            operand.shape[0] == chunk.shape[0] and not (
                operand.layout.kind == "sliced" and operand.layout.dim == 0)

    def send_blocks(self, stage: ir.Stage) -> tuple[int, int] | None:
        """(source, destination) blocks of a send between pipeline stages, else None."""
        if isinstance(stage, ir.CollectiveStage) and stage.op == "send":
            return send_blocks(self.plan.program, stage)
        return None

    def send_between_code(self, stage: ir.CollectiveStage,
                          transfer: Callable[[str, str, str], list[str]],
                          rows: tuple[str, str] | None = None) -> list[str]:
        """A send from one pipeline stage to another: the source block's ranks compute the
        operand and run `transfer(operand pointer, offset, count)`, the destination block's
        run it with a null operand to receive (rank i of a block to rank i of the other);
        `rows`: elements [lo, hi) only (a micro-batch), else all of them."""
        source, dest = self.send_blocks(stage)
        src, lines = self.materialize(stage.operand)
        lo, hi = rows or ("0", f"{self.buffers[stage.name].local}.count")
        offset, count = (f" + {lo}", f"{hi} - {lo}") if rows else ("", hi)
        null = f"static_cast<const {STORAGE[stage.type.dtype]}*>(nullptr)"
        code = [f"// {stage.name} = send(...) from {stage.group}[{source}] to "
                f"{stage.group}[{dest}]"]
        code += guarded(lines + transfer(f"{src}{offset}", offset, count),
                        ir.Placement(stage.group, source))
        if source != dest:
            code += guarded(transfer(null, offset, count), ir.Placement(stage.group, dest))
        return code

    def space(self, vt: ValueType, local: str) -> LoopSpace:
        return LoopSpace(vt, local, self.buffers.__getitem__, hoists=self.hoists_offsets,
                         broadcast_by_coords=self.broadcasts_by_coords)

    def fresh(self, prefix: str) -> str:
        return f"{prefix}{next(self.counter)}"

    # -- what each backend says: (var, local, ctype, type) -> lines; var -> pointer;
    # the loop over a block (space, body, resolved, lo="0", hi=None) and a value's store
    # (space, target, expr, resolved, lo="0", hi=None) -> lines; reductions; stages.
    def block(self, local: str, vt: ValueType) -> list[str]:
        raise NotImplementedError

    def temporary(self, var: str, local: str, ctype: str, vt: ValueType) -> list[str]:
        raise NotImplementedError

    def pointer(self, var: str) -> str:
        raise NotImplementedError

    def _reduce(self, node: ir.Reduce, done: dict[int, object]) -> tuple[str, list[str]]:
        raise NotImplementedError

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
                elif isinstance(node, ir.Transpose):
                    name, code = self._transpose(node, done)
                elif isinstance(node, ir.Reshape):
                    name, code = self._reshape(node, done)
                elif isinstance(node, (ir.Slice, ir.AsSliced)):
                    name, code = self._slice(node, done)
                else:
                    name, code = self._row_norm(node, done)
                lines += code
                done[id(node)] = name
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

    def _row_norm(self, node: ir.RowFunction, done: dict[int, object]
                  ) -> tuple[Buffer, list[str]]:
        """The operand's rows in a work buffer, then `pf::KIND_rows` on them: in place for
        the norms and softmax, into a buffer of one element a row for the row reductions."""
        work = "double" if node.operand.type.dtype == "f64" else "float"
        work_dtype = "f64" if work == "double" else "f32"
        var, local = self.fresh("rownorm"), self.fresh("Ln")
        buf = Buffer(var, ValueType(work_dtype, node.type.shape, node.type.layout), local)
        reduces = node.kind in ir.ROW_REDUCTIONS
        rows, rows_local = (self.fresh("rows"), self.fresh("Lr")) if reduces else (var, local)
        space = self.space(node.operand.type, rows_local)
        storage = STORAGE[node.operand.type.dtype]
        lines = self.temporary(rows, rows_local, work, node.operand.type)
        if reduces:
            lines += self.temporary(var, local, work, node.type)

        def body(ctx) -> list[str]:
            code, _ = cpp_expr(node.operand, ctx)
            return [f"{rows}[i] = static_cast<{work}>(pf::round_to<{storage}>({code}));"]
        last = len(node.type.shape) - 1
        # a micro-batch's rows only: elements [r0 * inner, r1 * inner) of operand and result
        chunk = self._chunk_rows(node.operand.type, node.dim) and (node.dim == last
                                                                  or not reduces)
        if chunk:
            lo_in, hi_in = (f"r0 * pf::inner_count({rows_local}, 1)",
                            f"r1 * pf::inner_count({rows_local}, 1)")
            lo_out, hi_out = (f"r0 * pf::inner_count({local}, 1)",
                              f"r1 * pf::inner_count({local}, 1)")
            lines += self.loop(space, body, self.resolve(space, done), lo_in, hi_in)
        else:
            lo_in = lo_out = "0"
            hi_out = f"{local}.count"
            lines += self.loop(space, body, self.resolve(space, done))
        offset_in = f" + {lo_in}" if chunk else ""
        offset_out = f" + {lo_out}" if chunk else ""
        count_out = f"{hi_out} - {lo_out}" if chunk else hi_out
        if reduces:
            n = f"{rows_local}.shape[{node.dim}]"
            if node.dim == last:
                lines.append(f"pf::{node.kind}_rows({self.pointer(rows)}{offset_in}, "
                             f"{self.pointer(var)}{offset_out}, {count_out}, {n}"
                             f"{self.stream_arg});")
            else:  # the operand as [outer, n, inner]
                outer = extent_product(rows_local, range(node.dim))
                inner = extent_product(rows_local, range(node.dim + 1, last + 1))
                lines.append(f"pf::{node.kind}_dim({self.pointer(rows)}, {self.pointer(var)}, "
                             f"{outer}, {n}, {inner}{self.stream_arg});")
            return buf, lines
        eps = ""
        if node.eps is not None:  # softmax has none
            eps, eps_lines = self.norm_eps(node, work, done)
            lines += eps_lines
            eps = f", {eps}"
        lines.append(f"pf::{node.kind}_rows({self.pointer(var)}{offset_out}, {count_out}, "
                     f"{local}.shape[{last}]{eps}{self.stream_arg});")
        return buf, lines

    def _operand_and_result(self, node: ir.Transpose | ir.Slice | ir.AsSliced,
                            done: dict[int, object]
                            ) -> tuple[Buffer, str, str, list[str]]:
        """For a node that moves its operand's elements: the operand in a buffer of its
        compute type (not rounded: an intermediate) and a buffer for the result's block:
        (the result, the operand's buffer, its shape, the lines making them)."""
        ctype = compute_type(node.type.dtype)
        src, src_local = self.fresh("unmoved"), self.fresh("Lt")
        var, local = self.fresh("moved"), self.fresh("Lu")
        buf = Buffer(var, ValueType(compute_dtype(node.type.dtype), node.type.shape,
                                    node.type.layout), local)
        space = self.space(node.operand.type, src_local)
        lines = self.temporary(src, src_local, ctype, node.operand.type)
        lines += self.temporary(var, local, ctype, node.type)

        def body(ctx) -> list[str]:
            code, _ = cpp_expr(node.operand, ctx)
            return [f"{src}[i] = static_cast<{ctype}>({code});"]
        return buf, src, src_local, lines + self.loop(space, body, self.resolve(space, done))

    def _transpose(self, node: ir.Transpose, done: dict[int, object]
                   ) -> tuple[Buffer, list[str]]:
        """The operand in a buffer, then `pf::transpose_dims` into the result's block."""
        buf, src, src_local, lines = self._operand_and_result(node, done)
        first, second = node.dims
        rank = len(node.type.shape)
        extents = [extent_product(src_local, range(first)), f"{src_local}.shape[{first}]",
                   extent_product(src_local, range(first + 1, second)),
                   f"{src_local}.shape[{second}]",
                   extent_product(src_local, range(second + 1, rank))]
        lines.append(f"pf::transpose_dims({self.pointer(src)}, {self.pointer(buf.var)}, "
                     f"{', '.join(extents)}{self.stream_arg});")
        return buf, lines

    def _reshape(self, node: ir.Reshape, done: dict[int, object]) -> tuple[Buffer, list[str]]:
        """The operand, in its block's row-major order, into a buffer of its compute type
        read with the result's block shape (a rank's block holds the same elements)."""
        ctype = compute_type(node.type.dtype)
        var, local, src_local = self.fresh("reshaped"), self.fresh("Lv"), self.fresh("Lw")
        buf = Buffer(var, ValueType(compute_dtype(node.type.dtype), node.type.shape,
                                    node.type.layout), local)
        space = self.space(node.operand.type, src_local)
        lines = self.block(src_local, node.operand.type)
        lines += self.temporary(var, local, ctype, node.type)

        def body(ctx) -> list[str]:
            code, _ = cpp_expr(node.operand, ctx)
            return [f"{var}[i] = static_cast<{ctype}>({code});"]
        return buf, lines + self.loop(space, body, self.resolve(space, done))

    def _slice(self, node: ir.Slice | ir.AsSliced, done: dict[int, object]
               ) -> tuple[Buffer, list[str]]:
        """The operand in a buffer, then `pf::slice_dim` copies the range into the result's
        block: `slice`'s range (the dim is whole on every rank), or for `as_sliced` the
        rank's own block of the dim."""
        buf, src, src_local, lines = self._operand_and_result(node, done)
        d, rank = node.dim, len(node.type.shape)
        start = f"{buf.local}.start[{d}]" if isinstance(node, ir.AsSliced) else \
            extent_code(node.start, self.sizes)
        lines.append(f"pf::slice_dim({self.pointer(src)}, {self.pointer(buf.var)}, "
                     f"{extent_product(src_local, range(d))}, {src_local}.shape[{d}], "
                     f"{extent_product(src_local, range(d + 1, rank))}, "
                     f"{start}, {buf.local}.shape[{d}]{self.stream_arg});")
        return buf, lines

    def norm_eps(self, node: ir.RowFunction, work: str,
                 done: dict[int, object]) -> tuple[str, list[str]]:
        """A row norm's epsilon as its call takes it: (the argument, lines computing it)."""
        eps, _ = cpp_expr(node.eps, self._scalar_context(done))
        return f"static_cast<{work}>({eps})", []

    def _scalar_context(self, done: dict[int, object]) -> ExprContext:
        space = LoopSpace(ValueType("f32", (), Layout("replicated")), "L_scalar_",
                          self.buffers.__getitem__)
        return expr_context(space, self.resolve(space, done))

    def fused_body(self, stages: list[ir.SimpleStage], stored: set[str] | None = None):
        """The parts of one loop computing every stage per element, later stages reading
        earlier ones from registers (rounded to their dtype, as binding rounds them):
        (lines that run first, the loop's space, its precomputed codes, its body). Only the
        stages named in `stored` (every one without it) are written to their buffers."""
        pre, done = self.precompute([s.expr for s in stages])
        space = self.space(stages[0].type, self.buffers[stages[0].name].local)
        resolved = self.resolve(space, done)

        def body(ctx: ExprContext) -> list[str]:
            lines = []
            for stage in stages:
                target, storage = self.buffers[stage.name], STORAGE[stage.type.dtype]
                code, _ = cpp_expr(stage.expr, ctx)
                register = f"r_{stage_id(stage)}"
                lines.append(f"const {compute_type(stage.type.dtype)} {register} = "
                             f"pf::round_to<{storage}>({code});")
                if stored is None or stage.name in stored:
                    lines.append(ctx.store(target.var, storage, register))
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

