"""The peer of bench/ccn_cpu.py: what a PyTorch user runs for data-parallel Adam on CPUs.

Launched by mpirun on R ranks (the rank comes from Open MPI's environment): gloo
all_reduce of the gradients, then torch.optim.Adam on f32 master weights. Each
configuration a user might pick is timed: the f16 gradients reduced as they are or
in f32 (converted first), and Adam `foreach` or `fused`. Prints on rank 0 one JSON
line: the median step time in ms (max over ranks) of each configuration.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist


def time_config(grad: torch.Tensor, n: int, reduce_f32: bool, kind: str) -> float:
    weight = torch.nn.Parameter(torch.rand(n, generator=torch.Generator().manual_seed(0)) * 2
                                - 1)
    optimizer = torch.optim.Adam([weight], lr=0.001, betas=(0.9, 0.999), eps=1e-8,
                                 **{kind: True})
    times = []
    iters = 20 if n <= 2**20 else 5
    for step in range(iters + 2):
        dist.barrier()
        begin = time.perf_counter()
        summed = grad.float() if reduce_f32 else grad.clone()
        dist.all_reduce(summed)
        weight.grad = summed if reduce_f32 else summed.float()
        optimizer.step()
        elapsed = torch.tensor([(time.perf_counter() - begin) * 1e3])
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
        if step >= 2:
            times.append(float(elapsed))
    return statistics.median(times)


def main() -> None:
    n = int(sys.argv[1])
    rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
    world = int(os.environ["OMPI_COMM_WORLD_SIZE"])
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    generator = torch.Generator().manual_seed(rank)
    grad = (torch.rand(n, generator=generator) * 2 - 1).to(torch.float16)
    result = {}
    for reduce_f32 in (False, True):
        for kind in ("foreach", "fused"):
            name = f"{'f32' if reduce_f32 else 'f16'} all_reduce + Adam({kind})"
            result[name] = time_config(grad, n, reduce_f32, kind)
    if rank == 0:
        print(json.dumps(result))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
