"""Attention fused into one kernel: decided once, in the lowering plan
(`LoweringPlan.attentions`), for the backends that have the kernel (CUDA:
cpp_runtime/ccn/cuda/attention.cuh).

Before:  s = matmul(q, transpose(k, 1, 2))          a batched GEMM, s stored: [B, Tq, Tk]
         p = softmax(f(s), -1)                       a kernel reading s, p stored
         o = matmul(p, v)   (or of cast(p, dtype))   a batched GEMM reading p
After:   o = attention(q, k, v, f): one kernel a query row computes its scores a tile of
         keys at a time, applies f, and keeps a running softmax (max and sum) and its
         weighted sum of v's rows; s and p are never stored (their buffers are not made)

The three are fused when: each is a stage of the top level (not in a group or a
micro-batched run) of one placement; `q`, `k`, `v` are values of 3 dims of one dtype the
kernel reads (f32, bf16, f16), with the layout of `s`, `p` and `o` (the same batch
blocks on every rank); `s` is read by `p`'s stage only, once, and `p` by `o`'s only; neither
is an output, a state or written into one; `f` is element-wise (no reduction or row norm
inside it: it is computed per score); `o` has `v`'s dtype; and no stage between `s` and `o`
writes into `q`'s or `k`'s buffer (the kernel reads them where `o` stands).

Rounding: each score is rounded to `s`'s dtype before `f`, as the reference does; the
softmax's weights are not rounded to `p`'s (or the cast's) dtype before they weigh `v`,
and they are normalised once at the end: differences of about one rounding, within the
tolerances of docs/ccn-language.md section 6.
"""

from __future__ import annotations

from dataclasses import dataclass

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.ir_edit import readers

KERNEL_DTYPES = ("f32", "bf16", "f16")


@dataclass(frozen=True)
class Attention:
    scores: ir.MatmulStage  # s = matmul(q, transpose(k, 1, 2))
    weights: ir.ElementwiseStage  # p = softmax(f(s), -1)
    output: ir.MatmulStage  # o = matmul(p, v)
    q: str
    k: str
    v: str
    score_expr: ir.Expr  # f(s): the softmax's operand
    score_ref: ir.Ref  # the read of s inside it

    @property
    def absorbed(self) -> tuple[str, str]:
        """The stages the fused kernel computes without storing."""
        return self.scores.name, self.weights.name


def attention_fusions(program: ir.Program, in_place: dict[str, str]) -> dict[str, Attention]:
    """The output matmul of each fusable attention -> its Attention."""
    top = {stage.name: stage for stage in program.stages if not isinstance(stage, ir.GROUPS)}
    kept = {v for _, v in program.outputs} | {v for _, v in program.state_updates} | \
        set(in_place)
    found = {}
    for output in top.values():
        fusion = _match(program, top, output, kept)
        if fusion is not None and not _overwritten(program, fusion, in_place):
            found[output.name] = fusion
    return found


def _overwritten(program: ir.Program, fusion: Attention, in_place: dict[str, str]) -> bool:
    """Whether a stage between the scores and the output writes into q's or k's buffer (a
    state's next value): the kernel reads them where the output stands."""
    order = [stage.name for stage in program.stages]
    between = order[order.index(fusion.scores.name) + 1:order.index(fusion.output.name)]
    return any(in_place.get(name) in (fusion.q, fusion.k) for name in between)


def _ref(expr: ir.Expr) -> ir.Ref | None:
    return expr if isinstance(expr, ir.Ref) else None


def _only_reader(program: ir.Program, name: str, stage: ir.Stage) -> bool:
    users = readers(program, name)
    return len(users) == 1 and users[0].name == stage.name and \
        sum(isinstance(n, ir.Ref) and n.name == name for n in _exprs(stage)) == 1


def _exprs(stage: ir.SimpleStage) -> list[ir.Expr]:
    roots = [stage.a, stage.b] if isinstance(stage, ir.MatmulStage) else [stage.expr]
    return [node for root in roots for node in ir.walk(root)]


def _match(program: ir.Program, top: dict[str, ir.Stage], output: ir.Stage,
           kept: set[str]) -> Attention | None:
    if not isinstance(output, ir.MatmulStage) or len(output.type.shape) != 3:
        return None
    a = output.a.operand if isinstance(output.a, ir.Cast) else output.a
    weights, v = top.get(getattr(a, "name", "")), _ref(output.b)
    if not isinstance(weights, ir.ElementwiseStage) or v is None or weights.name in kept:
        return None
    softmax = weights.expr
    if not (isinstance(softmax, ir.RowFunction) and softmax.kind == "softmax"
            and softmax.dim == len(softmax.type.shape) - 1):
        return None
    refs = [n for n in ir.walk(softmax.operand) if isinstance(n, ir.Ref) and n.name in top]
    scores = top.get(refs[0].name) if len(refs) == 1 else None
    if not isinstance(scores, ir.MatmulStage) or scores.name in kept:
        return None
    q, kt = _ref(scores.a), scores.b
    k = _ref(kt.operand) if isinstance(kt, ir.Transpose) and kt.dims == (1, 2) else None
    if q is None or k is None or any(isinstance(n, ir.PRECOMPUTED)
                                     for n in ir.walk(softmax.operand)):
        return None
    values = (q.type, k.type, v.type)
    layouts = {t.layout for t in (*values, scores.type, weights.type, output.type)}
    if len({t.dtype for t in values} | {output.type.dtype}) != 1 or \
            q.type.dtype not in KERNEL_DTYPES or len(layouts) != 1 or \
            any(len(t.shape) != 3 for t in values):
        return None
    if not (_only_reader(program, scores.name, weights)
            and _only_reader(program, weights.name, output)):
        return None
    places = {program.stage_placement(stage) for stage in (scores, weights, output)}
    if len(places) != 1:
        return None
    return Attention(scores, weights, output, q.name, k.name, v.name, softmax.operand, refs[0])
