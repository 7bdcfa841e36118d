"""Element-wise stages a GEMM applies in its epilogue: decided once, in the lowering plan
(`LoweringPlan.epilogues`), for the backends whose GEMM has epilogues (cuBLASLt's bias, GELU
and ReLU; EPILOGUE_KINDS of the backend's project module).

Before:  h = matmul(x, w1)      one GEMM, h stored in memory
         a = gelu(h + b1)       one kernel reading h back
After:   a = matmul(x, w1) with the epilogue bias_gelu(b1): one GEMM writes a; h is never
         stored (its buffer stays unused)

A matmul takes the epilogue of its one reader when: both are top-level stages, or parts of
one micro-batched run (not in a fused group or an overlap); the matmul's operands and
result have one dtype the GEMM multiplies natively (f32, bf16, f16); its result is read by
that stage only, once, and is
no output or state; the reader is `f(h)`, `h + b`, `b + h` or `f(h + b)` (`f` gelu or relu)
of the matmul's type, not written into a state's buffer; `b` is a replicated 1-dim input
(or a state no stage updates in place) of the matmul's dtype, as long as the product's
last dim. The GEMM then reads `b` where the matmul stands, which is the value the reader
would read.

Rounding: the epilogue works on the f32 accumulator, so the product is not rounded to its
dtype before the bias and the activation (the spec's rounding point at a matmul's output):
a difference of at most one rounding of the product, within the tolerances of
docs/ccn-language.md section 6.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.ir_edit import readers


class EpilogueKind(Enum):
    BIAS = "bias"
    GELU = "gelu"
    RELU = "relu"
    BIAS_GELU = "bias_gelu"
    BIAS_RELU = "bias_relu"


@dataclass(frozen=True)
class Epilogue:
    kind: EpilogueKind
    consumer: str  # the element-wise stage the GEMM computes and writes
    bias: str | None = None  # the bias vector's value, for the bias kinds

    def describe(self) -> str:
        return f"{self.kind.value}" + (f"({self.bias})" if self.bias else "")


NATIVE_GEMM = ("f32", "bf16", "f16")
ACTIVATIONS = {"gelu": (EpilogueKind.GELU, EpilogueKind.BIAS_GELU),
               "relu": (EpilogueKind.RELU, EpilogueKind.BIAS_RELU)}


def gemm_epilogues(program: ir.Program, kinds: frozenset[EpilogueKind],
                   in_place: dict[str, str]) -> dict[str, Epilogue]:
    """matmul stage -> the epilogue its GEMM applies, for the `kinds` a backend has;
    `in_place`: values written into a state's buffer (the plan's)."""
    if not kinds:
        return {}
    home = _homes(program)
    kept = {v for _, v in program.outputs} | {v for _, v in program.state_updates}
    found = {}
    for stage in program.flat_stages():
        if not isinstance(stage, ir.MatmulStage) or stage.name not in home or \
                stage.name in kept or stage.type.dtype not in NATIVE_GEMM or \
                {stage.a.type.dtype, stage.b.type.dtype} != {stage.type.dtype}:
            continue
        users = readers(program, stage.name)
        if len(users) != 1 or home.get(users[0].name) != home[stage.name]:
            continue
        consumer = users[0]
        if not isinstance(consumer, ir.ElementwiseStage) or consumer.type != stage.type or \
                consumer.name in in_place:
            continue
        epilogue = _match(consumer, stage, program, in_place)
        if epilogue and epilogue.kind in kinds:
            found[stage.name] = epilogue
    return found


def _homes(program: ir.Program) -> dict[str, str]:
    """Stages that may take or give an epilogue -> where they run: "" for the top level, a
    micro-batched run's name for its parts."""
    homes = {}
    for stage in program.stages:
        if isinstance(stage, ir.MicroBatchStage):
            homes.update({part.name: stage.name for part in stage.parts})
        elif not isinstance(stage, ir.GROUPS):
            homes[stage.name] = ""
    return homes


def _match(consumer: ir.ElementwiseStage, product: ir.MatmulStage, program: ir.Program,
           in_place: dict[str, str]) -> Epilogue | None:
    expr, activation = consumer.expr, None
    if isinstance(expr, ir.Func) and expr.name in ACTIVATIONS and len(expr.args) == 1:
        activation, expr = ACTIVATIONS[expr.name], expr.args[0]
    if _is(expr, product.name):
        return Epilogue(activation[0], consumer.name) if activation else None
    if not (isinstance(expr, ir.Binary) and expr.op == "+"):
        return None
    for h, b in ((expr.left, expr.right), (expr.right, expr.left)):
        if _is(h, product.name) and _is_bias(b, product, program, in_place):
            kind = activation[1] if activation else EpilogueKind.BIAS
            return Epilogue(kind, consumer.name, b.name)
    return None


def _is(expr: ir.Expr, name: str) -> bool:
    return isinstance(expr, ir.Ref) and expr.name == name


def _is_bias(expr: ir.Expr, product: ir.MatmulStage, program: ir.Program,
             in_place: dict[str, str]) -> bool:
    """A vector along the product's last dim that holds the same values all step long."""
    if not isinstance(expr, ir.Ref):
        return False
    tensor = next((t for t in program.tensors if t.name == expr.name), None)
    if tensor is None or (tensor.role == "state" and tensor.name in in_place.values()):
        return False
    vt = tensor.type
    # replicated in a group too (a pipeline stage's): each rank holds the whole vector
    return vt.dtype == product.type.dtype and vt.layout.kind == "replicated" and \
        vt.shape == product.type.shape[-1:]
