"""Hand-written numpy versions of every sample, for R simulated ranks, written from
docs/ccn-language.md.

Each oracle takes the inputs as the runner contract stores them (the whole logical
tensor for `replicated`/`sliced` values and initial states, one tensor per rank for
`local` ones), the rank count, the params, the seed and `--iters`, and returns, for
every output and updated state, what each rank holds after the last step.

Arithmetic follows docs/ccn-language.md section 4: f16/bf16 are computed in f32 and rounded to
their dtype when bound to a name, at the inputs and outputs of collectives, matmul,
reductions and dropout, and once in `update`. Collectives add in f32 (f64 for f64)
in rank order and round their result once. They are deliberately written out by
hand, one sample per function, rather than sharing code with the interpreter;
dropout masks come from tests/e2e/spec_random.py, not from the package's Philox.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import ml_dtypes
import numpy as np
from spec_random import dropout

F16, BF16, F32 = np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32)

Tensor = np.ndarray
Inputs = dict[str, "Tensor | list[Tensor]"]
PerRank = dict[str, list[Tensor]]
Oracle = Callable[[Inputs, int, dict[str, float], int, int], PerRank]


def block_range(n: int, ranks: int, rank: int) -> slice:
    """Spec section 1: `b = ceil(n / R)`; rank `r` holds `[r*b, min((r+1)*b, n))`."""
    b = -(-n // ranks)
    start = min(rank * b, n)
    return slice(start, min((rank + 1) * b, n))


def block_of(tensor: Tensor, dim: int, ranks: int, rank: int) -> Tensor:
    """Rank `rank`'s block of `tensor` sliced along `dim` (negative dims count from the end)."""
    dim = dim % tensor.ndim
    region = [slice(None)] * tensor.ndim
    region[dim] = block_range(tensor.shape[dim], ranks, rank)
    return tensor[tuple(region)]


def f32(x: Tensor | float) -> Tensor:
    return np.asarray(x, dtype=F32)


def sum_over_ranks(values: Sequence[Tensor], dtype: np.dtype) -> Tensor:
    """allreduce(sum): f32 accumulation in rank order, rounded once to `dtype`."""
    total = np.zeros(values[0].shape, dtype=F32)
    for value in values:
        total = total + value.astype(F32)
    return total.astype(dtype)


def gelu_tanh(x: Tensor) -> Tensor:
    """gelu, tanh form, in f32: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    x = f32(x)
    inner = np.float32(np.sqrt(2.0 / np.pi)) * (x + np.float32(0.044715) * x * x * x)
    return np.float32(0.5) * x * (np.float32(1.0) + np.tanh(inner))


def replicate(value: Tensor, ranks: int) -> list[Tensor]:
    return [value.copy() for _ in range(ranks)]


def adam_oracle(inputs: Inputs, ranks: int, params: dict[str, float], seed: int,
                iters: int) -> PerRank:
    """samples/adam.ccn: f16 gradients summed over the world, f32 replicated state."""
    lr, beta1 = f32(params.get("lr", 0.001)), f32(params.get("beta1", 0.9))
    beta2, eps = f32(params.get("beta2", 0.999)), f32(params.get("eps", 1e-8))
    w, m, v = f32(inputs["w"]), f32(inputs["m"]), f32(inputs["v"])
    for _ in range(iters):
        gsum = sum_over_ranks(inputs["g"], F16).astype(F32)
        m1 = (beta1 * m + (np.float32(1) - beta1) * gsum).astype(F32)
        v1 = (beta2 * v + (np.float32(1) - beta2) * gsum * gsum).astype(F32)
        w1 = (w - lr * m1 / (np.sqrt(v1) + eps)).astype(F32)
        w, m, v = w1, m1, v1
    return {"w": replicate(w, ranks), "m": replicate(m, ranks), "v": replicate(v, ranks)}


def l2_norm(x: Tensor) -> Tensor:
    """norm(x): accumulated in f32 or better (here f64), returned in f32."""
    x64 = x.astype(np.float64)
    return np.float32(np.sqrt(np.sum(x64 * x64)))


def lamb_oracle(inputs: Inputs, ranks: int, params: dict[str, float], seed: int,
                iters: int) -> PerRank:
    """samples/lamb.ccn: Adam moments, decoupled weight decay, trust ratio of norms."""
    lr, beta1 = f32(params.get("lr", 0.01)), f32(params.get("beta1", 0.9))
    beta2, eps = f32(params.get("beta2", 0.999)), f32(params.get("eps", 1e-6))
    wd = f32(params.get("wd", 0.01))
    w, m, v = f32(inputs["w"]), f32(inputs["m"]), f32(inputs["v"])
    for _ in range(iters):
        gsum = sum_over_ranks(inputs["g"], F16).astype(F32)
        m1 = (beta1 * m + (np.float32(1) - beta1) * gsum).astype(F32)
        v1 = (beta2 * v + (np.float32(1) - beta2) * gsum * gsum).astype(F32)
        u = (m1 / (np.sqrt(v1) + eps) + wd * w).astype(F32)
        wnorm, unorm = l2_norm(w), l2_norm(u)
        ratio = np.float32(wnorm / unorm) if wnorm > 0 and unorm > 0 else np.float32(1)
        w1 = (w - lr * ratio * u).astype(F32)
        w, m, v = w1, m1, v1
    return {"w": replicate(w, ranks), "m": replicate(m, ranks), "v": replicate(v, ranks)}


def sgd_oracle(inputs: Inputs, ranks: int, params: dict[str, float], seed: int,
               iters: int) -> PerRank:
    """samples/sgd.ccn: bf16 gradients averaged over the world, momentum, weight decay."""
    lr, momentum = f32(params.get("lr", 0.01)), f32(params.get("momentum", 0.9))
    wd = f32(params.get("wd", 0.0001))
    w, buf = f32(inputs["w"]), f32(inputs["buf"])
    for _ in range(iters):
        total = sum_over_ranks(inputs["g"], F32)
        gavg = (total / np.float32(ranks)).astype(BF16).astype(F32)
        d = (gavg + wd * w).astype(F32)
        buf1 = (momentum * buf + d).astype(F32)
        w1 = (w - lr * buf1).astype(F32)
        w, buf = w1, buf1
    return {"w": replicate(w, ranks), "buf": replicate(buf, ranks)}


def megatron_oracle(inputs: Inputs, ranks: int, params: dict[str, float], seed: int,
                    iters: int) -> PerRank:
    """samples/megatron.ccn: row-parallel matmul, allreduce, bias, dropout, residual (f16)."""
    p = params.get("p", 0.1)
    x, w = inputs["x"], inputs["w"]
    bias, resid = inputs["bias"], inputs["resid"]
    out = None
    for step in range(iters):
        partials = [
            (block_of(x, -1, ranks, r).astype(F32) @ block_of(w, 0, ranks, r).astype(F32))
            .astype(F16)
            for r in range(ranks)
        ]
        y = sum_over_ranks(partials, F16)
        dropout_input = (y.astype(F32) + bias.astype(F32)).astype(F16)
        z = dropout(dropout_input, p, 0, 0, seed + step)
        out = (resid.astype(F32) + z.astype(F32)).astype(F16)
    return {"out": replicate(out, ranks)}


def megatron_dropped(inputs: Inputs, params: dict[str, float], seed: int,
                     iters: int) -> Tensor:
    """The dropout mask of megatron's last step: True where the element is dropped."""
    shape = (inputs["x"].shape[0], inputs["w"].shape[1])
    ones = np.ones(shape, dtype=F32)
    kept = dropout(ones, params.get("p", 0.1), 0, 0, seed + iters - 1)
    return kept == 0


def send_ring_oracle(inputs: Inputs, ranks: int, params: dict[str, float], seed: int,
                    iters: int) -> PerRank:
    """samples/send_ring.ccn: two stages of R/2 ranks; per-rank dropout, sum in stage, send."""
    assert ranks % 2 == 0, "blocks(2) needs an even rank count"
    p, per_stage = params.get("p", 0.25), ranks // 2
    a = (inputs["x"].astype(F32) @ inputs["w"].astype(F32)).astype(F32)
    hidden = gelu_tanh(a)
    acc = [f32(t) for t in inputs["acc"]]
    recv: list[Tensor] = []
    for step in range(iters):
        parts = [dropout((hidden * inputs["u"][r]).astype(F32), p, r, 0, seed + step)
                 for r in range(ranks)]
        stage_sums = [sum_over_ranks(parts[b * per_stage:(b + 1) * per_stage], F32)
                      for b in range(2)]
        recv = [stage_sums[(r // per_stage - 1) % 2].copy() for r in range(ranks)]
        acc = [(acc[r] + recv[r]).astype(F32) for r in range(ranks)]
    return {"recv": recv, "acc": acc}


def layernorm_rows(x: Tensor, eps: float) -> Tensor:
    """layernorm along the last dim in f32: (x - mean) / sqrt(var + eps), biased variance."""
    x = f32(x)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + np.float32(eps))


def mlp_block(x: Tensor, w_in: Tensor, bias: Tensor, w_out: Tensor, gamma: Tensor,
              eps: float, ranks: int) -> Tensor:
    """One Megatron MLP block (bf16) over `ranks` ranks: w_in by columns, w_out by rows."""
    hidden = [(x.astype(F32) @ block_of(w_in, -1, ranks, r).astype(F32)).astype(BF16)
              for r in range(ranks)]
    biases = [block_of(bias, 0, ranks, r).astype(F32) for r in range(ranks)]
    acts = [gelu_tanh(h.astype(F32) + b).astype(BF16) for h, b in zip(hidden, biases)]
    parts = [(a.astype(F32) @ block_of(w_out, 0, ranks, r).astype(F32)).astype(BF16)
             for r, a in enumerate(acts)]
    resid = (x.astype(F32) + sum_over_ranks(parts, BF16).astype(F32)).astype(BF16)
    return (layernorm_rows(resid, eps) * gamma.astype(F32)).astype(BF16)


def pipeline_oracle(inputs: Inputs, ranks: int, params: dict[str, float], seed: int,
                    iters: int) -> PerRank:
    """samples/pipeline.ccn: an MLP block on each of two stages of R/2 ranks, the first's
    result sent to the second; only stage 1's ranks hold `out` (None on the others)."""
    assert ranks % 2 == 0, "blocks(2) needs an even rank count"
    eps, half = params.get("eps", 1e-5), ranks // 2
    z = mlp_block(inputs["x"], inputs["w1"], inputs["b1"], inputs["w2"], inputs["g1"], eps, half)
    out = mlp_block(z, inputs["w3"], inputs["b3"], inputs["w4"], inputs["g2"], eps, half)
    return {"out": [None] * half + replicate(out, half)}
