"""The peer of bench/ccn_layers.py: the layers of samples/mlp.ccn, mlp_sp.ccn,
transformer.ccn, transformer_sp.ccn and pipeline.ccn as a PyTorch user writes them on CPUs
(bf16, torch.distributed over gloo, one thread per rank unless OMP_NUM_THREADS says
otherwise).

Usage (under mpirun -np R): torch_layers_peer.py mlp|mlp_sp B D F [ITERS]
                            torch_layers_peer.py transformer|transformer_sp T D H E F [ITERS]
                            torch_layers_peer.py pipeline B D F G [ITERS]
For each way of running the step (the layers: reducing the partial sums in bf16, or in
f32: converted, reduced, converted back; the pipeline: the whole batch, or 4
micro-batches sent as each is done) it times the step; prints one JSON line on rank 0:
the median ms (max over ranks) of each way, so the caller can keep the fastest.
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


def pipeline_ways(sizes: list[int], rank: int, world: int, rand) -> dict:
    """samples/pipeline.ccn: two stages of world/2 ranks, each a Megatron MLP block
    (tensor-parallel in the stage, its allreduce in bf16 among the stage's ranks), stage
    0's result sent rank i to rank i; the whole batch, or GPipe's 4 micro-batches."""
    b, d, f, g = sizes
    tp = world // 2
    stage, index = rank // tp, rank % tp
    groups = [dist.new_group(list(range(k * tp, (k + 1) * tp))) for k in (0, 1)]
    hidden = f if stage == 0 else g
    lo, hi = block(hidden, index, tp)
    x = rand(b, d)
    w_in, b_in = rand(d, hidden)[:, lo:hi].contiguous(), rand(hidden)[lo:hi].contiguous()
    w_out, gamma = rand(hidden, d)[lo:hi].contiguous(), rand(d)

    def mlp(rows: torch.Tensor) -> torch.Tensor:
        a = F.gelu(torch.matmul(rows, w_in) + b_in, approximate="tanh")
        y = torch.matmul(a, w_out)
        dist.all_reduce(y, group=groups[stage])
        return F.layer_norm(rows + y, (d,), None, None, 1e-5) * gamma

    def run(chunks: int) -> torch.Tensor | None:
        sends, out = [], None
        for c in range(chunks):
            r0, r1 = block(b, c, chunks)
            if stage == 0:
                z = mlp(x[r0:r1])
                sends.append(dist.isend(z, rank + tp))
            else:
                z = torch.empty(r1 - r0, d, dtype=torch.bfloat16)
                dist.recv(z, rank - tp)
                out = mlp(z)
        for request in sends:
            request.wait()
        return out
    return {"whole batch": lambda: run(1), "4 micro-batches": lambda: run(4)}


def main() -> None:
    variant, *sizes = sys.argv[1], *map(int, sys.argv[2:])
    layer = variant.startswith("transformer")
    expected = 5 if layer else 4 if variant == "pipeline" else 3
    iters = sizes[expected] if len(sizes) > expected else 15
    rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
    world = int(os.environ["OMPI_COMM_WORLD_SIZE"])
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    gen = torch.Generator().manual_seed(1)

    def rand(*shape: int) -> torch.Tensor:
        return (torch.rand(*shape, generator=gen) * 2 - 1).to(torch.bfloat16)

    if variant == "pipeline":
        ways = pipeline_ways(sizes[:4], rank, world, rand)
    else:
        step = transformer_step(sizes[:5], rank, world, rand, variant == "transformer_sp") \
            if layer else mlp_step(variant, sizes[:3], rank, world, rand)
        ways = {"bf16 reduction": lambda: step(False), "f32 reduction": lambda: step(True)}
    result = {}
    with torch.inference_mode():
        for way, run in ways.items():
            times = []
            for i in range(WARMUP + iters):
                dist.barrier()
                begin = time.perf_counter()
                run()
                elapsed = torch.tensor([(time.perf_counter() - begin) * 1e3])
                dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
                if i >= WARMUP:
                    times.append(float(elapsed))
            result[way] = statistics.median(times)
    if rank == 0:
        print(json.dumps(result))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
