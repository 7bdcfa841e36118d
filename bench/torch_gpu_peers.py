"""PyTorch on one CUDA GPU: the peers of bench/gpu_bench.py, each timed by CUDA events
around every step (20 after 3 warm-up steps), median in ms.

Usage:
  torch_gpu_peers.py peak                   dense bf16 TFLOP/s of an 8192-cube torch.matmul
  torch_gpu_peers.py optimizer sgd|adam N   the fused optimizer step over N f32 weights
  torch_gpu_peers.py mlp B D F              the MLP block of samples/mlp.ccn: eager, compiled
  torch_gpu_peers.py gemm B D F             torch.matmul of bf16 [B, D] x [D, F]
  torch_gpu_peers.py transformer T D H E F  the layer of samples/transformer.ccn (attention
                                            by scaled_dot_product_attention): eager, compiled

Prints one JSON line: {"<configuration>": median_ms, ...}, or {"unavailable": why} where
PyTorch or its CUDA device is missing.
"""

from __future__ import annotations

import json
import statistics
import sys


def timed(step, iters: int = 20, warmup: int = 3) -> float:
    import torch

    for _ in range(warmup):
        step()
    times = []
    for _ in range(iters):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        step()
        end.record()
        end.synchronize()
        times.append(begin.elapsed_time(end))
    return statistics.median(times)


def optimizer(kind: str, n: int) -> dict[str, float]:
    """samples/sgd.ccn and samples/adam.ccn as a PyTorch user steps them: f32 weights and
    gradients on the GPU, the fused optimizer (its fastest configuration)."""
    import torch

    weight = torch.nn.Parameter(torch.rand(n, device="cuda") * 2 - 1)
    weight.grad = torch.rand(n, device="cuda") * 2 - 1
    if kind == "sgd":
        step = torch.optim.SGD([weight], lr=0.01, momentum=0.9, weight_decay=1e-4, fused=True)
        return {"torch.optim.SGD(fused=True)": timed(step.step)}
    adam = torch.optim.Adam([weight], lr=0.001, eps=1e-8, fused=True)
    adamw = torch.optim.AdamW([weight], lr=0.001, eps=1e-8, fused=True)
    return {"torch.optim.Adam(fused=True)": timed(adam.step),
            "torch.optim.AdamW(fused=True)": timed(adamw.step)}


def mlp(b: int, d: int, f: int) -> dict[str, float]:
    import torch
    import torch.nn.functional as F

    def rand(*shape: int) -> torch.Tensor:
        return (torch.rand(*shape, device="cuda") * 2 - 1).to(torch.bfloat16)

    x, w1, b1, w2, b2 = rand(b, d), rand(d, f), rand(f), rand(f, d), rand(d)
    gamma, beta = rand(d), rand(d)

    def block() -> torch.Tensor:
        a = F.gelu(torch.matmul(x, w1) + b1, approximate="tanh")
        r = x + torch.matmul(a, w2) + b2
        return F.layer_norm(r, (d,), None, None, 1e-5) * gamma + beta

    return {"PyTorch eager": timed(block), "torch.compile": timed(torch.compile(block))}


def gemm(b: int, d: int, f: int) -> dict[str, float]:
    import torch

    x = torch.rand(b, d, device="cuda").to(torch.bfloat16)
    w = torch.rand(d, f, device="cuda").to(torch.bfloat16)
    return {"torch.matmul": timed(lambda: torch.matmul(x, w))}


def transformer(t: int, d: int, h: int, e: int, f: int) -> dict[str, float]:
    """samples/transformer.ccn's layer at R = 1, attention by PyTorch's fused kernel."""
    import torch
    import torch.nn.functional as F

    def rand(*shape: int) -> torch.Tensor:
        return (torch.rand(*shape, device="cuda") * 2 - 1).to(torch.bfloat16)

    x, g1, g2, b1, b2 = rand(t, d), rand(d), rand(d), rand(f), rand(d)
    wq, wk, wv, wo = rand(h, d, e), rand(h, d, e), rand(h, d, e), rand(h, e, d)
    w1, w2 = rand(d, f), rand(f, d)
    mask = torch.zeros(t, t, device="cuda", dtype=torch.bfloat16)

    def layer() -> torch.Tensor:
        a = F.layer_norm(x, (d,), None, None, 1e-5) * g1
        q, k, v = (torch.einsum("td,hde->hte", a, w) for w in (wq, wk, wv))
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.125)
        r = x + torch.einsum("hte,hed->td", o, wo)
        a2 = F.layer_norm(r, (d,), None, None, 1e-5) * g2
        return r + torch.matmul(F.gelu(torch.matmul(a2, w1) + b1, approximate="tanh"), w2) + b2

    return {"PyTorch eager (SDPA)": timed(layer),
            "torch.compile (SDPA)": timed(torch.compile(layer))}


def peak() -> dict[str, float]:
    """Dense bf16 TFLOP/s of the GPU as cuBLAS reaches it (one 8192-cube product)."""
    n = 8192
    return {"tflops": 2 * n**3 / (gemm(n, n, n)["torch.matmul"] * 1e9)}


def main(argv: list[str]) -> dict[str, object]:
    try:
        import torch
    except ImportError:
        return {"unavailable": "PyTorch is not installed for this Python"}
    if not torch.cuda.is_available():
        return {"unavailable": "PyTorch sees no CUDA device"}
    what, numbers = argv[0], [int(a) for a in argv[1:] if a.isdigit()]
    if what == "peak":
        return peak()
    if what == "optimizer":
        return optimizer(argv[1], numbers[0])
    return {"mlp": mlp, "gemm": gemm, "transformer": transformer}[what](*numbers)


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:])), flush=True)
