"""The operands of a matmul stage as both backends hand them to their GEMM library
(oneDNN on the CPU, cuBLASLt on the GPU).

Operands of one 16-bit or f32 dtype go to the library in that dtype: a name whose buffer
holds the operand's block is passed as it is, an expression is materialised (rounded to
its dtype, the spec's rounding point) into a temporary. Mixed or integer dtypes are widened
to float (f64 to double) first. The library accumulates in f32 and writes the result
straight into its buffer when the result has the operands' dtype (its one rounding from
f32) or is f32; otherwise the backend stores a wider temporary afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass

from parafuse.ccn_compiler import ir
from parafuse.emitters.ccn.cpp_expr import STORAGE, cpp_expr
from parafuse.emitters.ccn.plan import Buffer, LoweringPlan
from parafuse.emitters.ccn.stage_writer import StageWriter

NATIVE = ("f32", "bf16", "f16")  # operand dtypes the libraries multiply as they are


@dataclass(frozen=True)
class GemmOperands:
    """Pointers to A (its block shape `la`) and B (`lb`) in `in_dtype`, after `lines`."""

    lines: list[str]
    in_dtype: str
    a: str
    la: str
    b: str
    lb: str
    direct: bool  # the library writes the result in its own dtype

    @property
    def native(self) -> bool:
        return self.in_dtype in NATIVE


def gemm_in_dtype(stage: ir.MatmulStage) -> str:
    """The dtype both operands are handed over in."""
    a_dtype, b_dtype = stage.a.type.dtype, stage.b.type.dtype
    if a_dtype == b_dtype and a_dtype in NATIVE:
        return a_dtype
    return "f64" if "f64" in (a_dtype, b_dtype, stage.type.dtype) else "f32"


def writes_direct(stage: ir.MatmulStage, in_dtype: str) -> bool:
    """Whether the library writes the product of `in_dtype` operands in the result's dtype."""
    return stage.type.dtype == in_dtype or (stage.type.dtype == "f32" and in_dtype in NATIVE)


def gemm_operands(stage: ir.MatmulStage, writer: StageWriter) -> GemmOperands:
    in_dtype = gemm_in_dtype(stage)
    lines: list[str] = []
    operands = []
    for expr in (stage.a, stage.b):
        pointer, local, code = _operand(expr, in_dtype, writer)
        lines += code
        operands.append((pointer, local))
    (a, la), (b, lb) = operands
    return GemmOperands(lines, in_dtype, a, la, b, lb, writes_direct(stage, in_dtype))


def _operand(expr: ir.Expr, in_dtype: str, writer: StageWriter) -> tuple[str, str, list[str]]:
    """(pointer, block shape, lines) of one operand in `in_dtype`."""
    if isinstance(expr, ir.Ref) and expr.type.dtype == in_dtype:
        buffer = writer.buffers[expr.name]
        if not buffer.is_param and buffer.type.layout == expr.type.layout:
            return writer.pointer(buffer.var), buffer.local, []
    var, local = writer.fresh("mm"), writer.fresh("Lm")
    storage, in_storage = STORAGE[expr.type.dtype], STORAGE[in_dtype]
    lines = writer.temporary(var, local, in_storage, expr.type)
    pre, done = writer.precompute([expr])
    space = writer.space(expr.type, local)

    def body(ctx) -> list[str]:
        code, _ = cpp_expr(expr, ctx)
        return [f"{var}[i] = pf::store_as<{in_storage}>(pf::round_to<{storage}>({code}));"]
    return writer.pointer(var), local, lines + pre + writer.loop(space, body,
                                                                 writer.resolve(space, done))


def gemm_target(stage: ir.MatmulStage, writer: StageWriter) -> tuple[Buffer, str]:
    """Where the GEMM of `stage` writes, and the epilogue arguments of the runtime's GEMM
    call (none without one): the plan's epilogue computes its consumer, whose buffer the
    GEMM writes; the bias starts at the product block's first column."""
    epilogue = writer.plan.epilogues.get(stage.name)
    if epilogue is None:
        return writer.buffers[stage.name], ""
    target = writer.buffers[epilogue.consumer]
    args = f", pf::Epilogue::{epilogue.kind.value}"
    if epilogue.bias:
        bias = writer.pointer(writer.buffers[epilogue.bias].var)
        args += f", {bias} + {target.local}.start[{len(stage.type.shape) - 1}]"
    return target, args


def gemm_comment(head: str, stage: ir.MatmulStage, plan: LoweringPlan) -> str:
    """`head`, then the epilogue the plan gives the GEMM, if any."""
    epilogue = plan.epilogues.get(stage.name)
    if epilogue:
        head += f", its epilogue {epilogue.describe()} computing {epilogue.consumer}"
    return head
