"""The peer of bench/ccn_layers.py: the layers of samples/mlp.ccn, mlp_sp.ccn,
transformer.ccn and transformer_sp.ccn as a PyTorch user writes them on CPUs (bf16,
torch.distributed over gloo, one thread per rank unless OMP_NUM_THREADS says otherwise).

Usage (under mpirun -np R): torch_layers_peer.py mlp|mlp_sp B D F [ITERS]
                            torch_layers_peer.py transformer|transformer_sp T D H E F [ITERS]
For each way of reducing the partial sums (in bf16, or in f32: converted, reduced,
converted back) it times the step; prints one JSON line on rank 0: the median ms
(max over ranks) of each way, so the caller can keep the fastest.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

WARMUP = 3


def reduce_sum(partial: torch.Tensor, wide: bool) -> torch.Tensor:
    value = partial.float() if wide else partial.clone()
    dist.all_reduce(value)
    return value.to(partial.dtype) if wide else value


def block(n: int, rank: int, world: int) -> tuple[int, int]:
    """This rank's range of n indices (the spec's block split)."""
    size = -(-n // world)
    return min(rank * size, n), min((rank + 1) * size, n)


def mlp_step(variant: str, sizes: list[int], rank: int, world: int, rand):
    """Megatron's MLP block (W1 by columns, W2 by rows), or its sequence-parallel form."""
    b, d, f = sizes
    bf = torch.bfloat16
    lo, hi = block(f, rank, world)
    x, w1, b1 = rand(b, d), rand(d, f)[:, lo:hi].contiguous(), rand(f)[lo:hi].contiguous()
    w2, b2 = rand(f, d)[lo:hi].contiguous(), rand(d)
    gamma, beta = rand(d), rand(d)
    r0, r1 = block(b, rank, world)
    x_rows = x[r0:r1].contiguous()

    def step(wide: bool) -> torch.Tensor:
        if variant == "mlp":
            a = F.gelu(torch.matmul(x, w1) + b1, approximate="tanh")
            y = reduce_sum(torch.matmul(a, w2), wide)
            return F.layer_norm(x + y + b2, (d,), gamma, beta, 1e-5)
        # sequence parallel: gather the rows, and (gloo has no reduce-scatter) reduce
        # the partial sums and keep this rank's rows
        blocks = [torch.empty(block(b, i, world)[1] - block(b, i, world)[0], d, dtype=bf)
                  for i in range(world)]
        dist.all_gather(blocks, x_rows)
        xg = torch.cat(blocks)
        a = F.gelu(torch.matmul(xg, w1) + b1, approximate="tanh")
        y = reduce_sum(torch.matmul(a, w2), wide)[r0:r1]
        return F.layer_norm(x_rows + y + b2, (d,), gamma, beta, 1e-5)
    return step


def gather_rows(rows: torch.Tensor, t: int, world: int) -> torch.Tensor:
    """Every rank's block of the T rows, in order."""
    blocks = [torch.empty(block(t, i, world)[1] - block(t, i, world)[0], rows.shape[1],
                          dtype=rows.dtype) for i in range(world)]
    dist.all_gather(blocks, rows)
    return torch.cat(blocks)


def transformer_step(sizes: list[int], rank: int, world: int, rand, sequence: bool):
    """The GPT layer of samples/transformer.ccn as Megatron-LM writes it: this rank's heads'
    Q, K and V from one GEMM of a fused weight, PyTorch's fused attention with the additive
    mask, one GEMM back to D features, an allreduce; the MLP block as above. `sequence`:
    transformer_sp.ccn, the rows split outside the blocks (gathered before each, the
    partial sums reduced and this rank's rows kept after it: gloo has no reduce-scatter)."""
    t, d, h, e, f = sizes
    h0, h1 = block(h, rank, world)
    heads = h1 - h0
    wq, wk, wv = (rand(h, d, e)[h0:h1] for _ in range(3))
    wqkv = torch.cat([w.permute(1, 0, 2).reshape(d, heads * e) for w in (wq, wk, wv)], 1)
    wo = rand(h, e, d)[h0:h1].reshape(heads * e, d).contiguous()
    x, g1, g2 = rand(t, d), rand(d), rand(d)
    mask = torch.triu(torch.full((t, t), float("-inf")), 1).to(torch.bfloat16)
    lo, hi = block(f, rank, world)
    w1, b1 = rand(d, f)[:, lo:hi].contiguous(), rand(f)[lo:hi].contiguous()
    w2, b2 = rand(f, d)[lo:hi].contiguous(), rand(d)

    r0, r1 = block(t, rank, world) if sequence else (0, t)
    x_mine = x[r0:r1].contiguous()

    def whole(rows: torch.Tensor) -> torch.Tensor:
        return gather_rows(rows, t, world) if sequence else rows

    def step(wide: bool) -> torch.Tensor:
        hn = whole(F.layer_norm(x_mine, (d,), g1, None, 1e-5))
        q, k, v = (p.view(t, heads, e).transpose(0, 1)
                   for p in torch.matmul(hn, wqkv).split(heads * e, 1))
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=e ** -0.5)
        attn = torch.matmul(o.transpose(0, 1).reshape(t, heads * e), wo)
        r = x_mine + reduce_sum(attn, wide)[r0:r1]
        a = F.gelu(torch.matmul(whole(F.layer_norm(r, (d,), g2, None, 1e-5)), w1) + b1,
                   approximate="tanh")
        return r + reduce_sum(torch.matmul(a, w2), wide)[r0:r1] + b2
    return step


def main() -> None:
    variant, *sizes = sys.argv[1], *map(int, sys.argv[2:])
    layer = variant.startswith("transformer")
    expected = 5 if layer else 3
    iters = sizes[expected] if len(sizes) > expected else 15
    rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
    world = int(os.environ["OMPI_COMM_WORLD_SIZE"])
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    gen = torch.Generator().manual_seed(1)

    def rand(*shape: int) -> torch.Tensor:
        return (torch.rand(*shape, generator=gen) * 2 - 1).to(torch.bfloat16)

    step = transformer_step(sizes[:5], rank, world, rand, variant == "transformer_sp") \
        if layer else mlp_step(variant, sizes[:3], rank, world, rand)
    result = {}
    with torch.inference_mode():
        for wide in (False, True):
            times = []
            for i in range(WARMUP + iters):
                dist.barrier()
                begin = time.perf_counter()
                step(wide)
                elapsed = torch.tensor([(time.perf_counter() - begin) * 1e3])
                dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
                if i >= WARMUP:
                    times.append(float(elapsed))
            result["f32 reduction" if wide else "bf16 reduction"] = statistics.median(times)
    if rank == 0:
        print(json.dumps(result))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
