"""Worker of bench/ccn_cpu_python.py, run under mpirun: times the generated `adam` module's
`step` on random numpy blocks; rank 0 prints the median over steps of the slowest rank."""

import statistics
import sys
import time

import numpy as np
from mpi4py import MPI

module_dir, schedule, n, steps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
sys.path.insert(0, module_dir)
import adam  # noqa: E402

comm = MPI.COMM_WORLD
program = adam.Program(comm, {"N": n}, schedule)
rng = np.random.default_rng(comm.Get_rank())
tensors = {}
for name in program.tensor_names():
    low = 0 if name == "v" else -1
    dtype = np.float16 if name == "g" else np.float32
    tensors[name] = rng.uniform(low, 1, program.local_shape(name)).astype(dtype)
times = []
for step in range(steps + 2):  # two warm-up steps
    comm.Barrier()
    start = time.perf_counter()
    program.step(tensors, seed=0, step=step)
    times.append(comm.allreduce(time.perf_counter() - start, op=MPI.MAX))
if comm.Get_rank() == 0:
    print(1000 * statistics.median(times[2:]))
