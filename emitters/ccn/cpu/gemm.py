"""How the CPU backend calls the runtime's `pf::matmul` (oneDNN, ccn/cpu/matmul.hpp) for a
matmul stage, whole or by chunks of rows.

Operands of one 16-bit or f32 dtype are handed to the library in that dtype: a name whose
buffer holds the operand's block is passed as it is, an expression is materialised
(rounded to its dtype, the spec's rounding point) into a temporary. Mixed or integer
dtypes are widened to float (f64 to double) first. The library accumulates in f32 and
writes the result straight into the stage's buffer when the result has the operands'
dtype (its one rounding from f32); otherwise into a float temporary stored afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass

from parafuse.ccn_compiler import ir
from parafuse.emitters.ccn.cpp_expr import STORAGE, cpp_expr
from parafuse.emitters.ccn.stage_writer import StageWriter

NATIVE = ("f32", "bf16", "f16")  # operand dtypes the library multiplies as they are


@dataclass
class GemmCall:
    """Operands ready for `pf::matmul`: pointers to rows of A (its block shape `la`), B
    (`lb`), and where the product goes."""

    lines: list[str]
    a: str
    la: str
    b: str
    lb: str
    out: str  # a pointer to the result's elements, row 0
    store_after: str  # "" or the float temporary to store into the stage's buffer
    rank_a: int  # dims of A (its rows are every dim but the last)

    def call(self, lo: str = "0", hi: str | None = None) -> list[str]:
        """Rows of elements [lo, hi) of the result (all of them by default)."""
        n = f"{self.lb}.shape[1]"
        k = f"{self.la}.shape.back()"
        rows = f"pf::outer_count({self.la}, {self.rank_a - 1})" if hi is None \
            else f"(({hi}) - ({lo})) / {n}"
        a = self.a if hi is None else f"{self.a} + ({lo}) / {n} * {k}"
        out = self.out if hi is None else f"{self.out} + {lo}"
        return [f"pf::matmul({a}, {self.b}, {out}, {rows}, {k}, {n});"]


def gemm_call(stage: ir.MatmulStage, writer: StageWriter) -> GemmCall:
    a_dtype, b_dtype = stage.a.type.dtype, stage.b.type.dtype
    if a_dtype == b_dtype and a_dtype in NATIVE:
        in_dtype = a_dtype
    else:
        in_dtype = "f64" if "f64" in (a_dtype, b_dtype, stage.type.dtype) else "f32"
    lines = [f"// {stage.name} = matmul(...): pf::matmul in {in_dtype}"]
    operands = []
    for expr in (stage.a, stage.b):
        pointer, local, code = _operand(expr, in_dtype, writer)
        lines += code
        operands.append((pointer, local))
    target = writer.buffers[stage.name]
    if stage.type.dtype == in_dtype or (stage.type.dtype == "f32" and in_dtype in NATIVE):
        out, store_after = f"{target.var}.data()", ""
    else:
        wide = "double" if in_dtype == "f64" else "float"
        store_after = writer.fresh("mmout")
        lines.append(f"std::vector<{wide}> {store_after}({target.local}.count);")
        out = f"{store_after}.data()"
    (a, la), (b, lb) = operands
    return GemmCall(lines, a, la, b, lb, out, store_after, len(stage.a.type.shape))


def store_product(call: GemmCall, stage: ir.MatmulStage, writer: StageWriter,
                  lo: str = "0", hi: str | None = None) -> list[str]:
    """Round a product held in a wider temporary into the stage's buffer (rows [lo, hi))."""
    if not call.store_after:
        return []
    target = writer.buffers[stage.name]
    end = hi if hi is not None else f"{target.local}.count"
    return [f"for (int64_t i = {lo}; i < {end}; ++i) {target.var}[i] = "
            f"pf::store_as<{STORAGE[stage.type.dtype]}>({call.store_after}[i]);"]


def _operand(expr: ir.Expr, in_dtype: str, writer: StageWriter):
    """(pointer, block shape, lines) of one operand in `in_dtype`."""
    if isinstance(expr, ir.Ref) and expr.type.dtype == in_dtype:
        buffer = writer.buffers[expr.name]
        if not buffer.is_param and buffer.type.layout == expr.type.layout:
            return f"{buffer.var}.data()", buffer.local, []
    var, local = writer.fresh("mm"), writer.fresh("Lm")
    storage, in_storage = STORAGE[expr.type.dtype], STORAGE[in_dtype]
    lines = writer.temporary(var, local, in_storage, expr.type)
    pre, done = writer.precompute([expr])
    space = writer.space(expr.type, local)

    def body(ctx) -> list[str]:
        code, _ = cpp_expr(expr, ctx)
        return [f"{var}[i] = pf::store_as<{in_storage}>(pf::round_to<{storage}>({code}));"]
    return f"{var}.data()", local, lines + pre + writer.loop(space, body,
                                                             writer.resolve(space, done))
