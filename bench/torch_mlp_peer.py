"""The peer of bench/ccn_mlp.py: the Megatron MLP blocks of samples/mlp.ccn and
samples/mlp_sp.ccn as a PyTorch user writes them on CPUs (bf16, torch.distributed
over gloo, one thread per rank unless OMP_NUM_THREADS says otherwise).

Usage (under mpirun -np R): torch_mlp_peer.py mlp|mlp_sp B D F [ITERS]
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


def main() -> None:
    variant, b, d, f = sys.argv[1], *map(int, sys.argv[2:5])
    iters = int(sys.argv[5]) if len(sys.argv) > 5 else 15
    rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
    world = int(os.environ["OMPI_COMM_WORLD_SIZE"])
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    gen = torch.Generator().manual_seed(1)
    bf = torch.bfloat16

    def rand(*shape: int) -> torch.Tensor:
        return (torch.rand(*shape, generator=gen) * 2 - 1).to(bf)

    cols = -(-f // world)  # this rank's block of F (the spec's block split)
    lo, hi = min(rank * cols, f), min((rank + 1) * cols, f)
    x, w1, b1 = rand(b, d), rand(d, f)[:, lo:hi].contiguous(), rand(f)[lo:hi].contiguous()
    w2, b2 = rand(f, d)[lo:hi].contiguous(), rand(d)
    gamma, beta = rand(d), rand(d)
    rows = -(-b // world)
    r0, r1 = min(rank * rows, b), min((rank + 1) * rows, b)
    x_rows = x[r0:r1].contiguous()

    def step(wide: bool) -> torch.Tensor:
        if variant == "mlp":
            a = F.gelu(torch.matmul(x, w1) + b1, approximate="tanh")
            y = reduce_sum(torch.matmul(a, w2), wide)
            return F.layer_norm(x + y + b2, (d,), gamma, beta, 1e-5)
        # sequence parallel: gather the rows, and (gloo has no reduce-scatter) reduce
        # the partial sums and keep this rank's rows
        blocks = [torch.empty(min((i + 1) * rows, b) - min(i * rows, b), d, dtype=bf)
                  for i in range(world)]
        dist.all_gather(blocks, x_rows)
        xg = torch.cat(blocks)
        a = F.gelu(torch.matmul(xg, w1) + b1, approximate="tanh")
        y = reduce_sum(torch.matmul(a, w2), wide)[r0:r1]
        return F.layer_norm(x_rows + y + b2, (d,), gamma, beta, 1e-5)

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
