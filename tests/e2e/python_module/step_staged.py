"""Run under mpirun -np 2: one step of the generated `staged` module (tests/e2e/ccn_programs.py
STAGED, a pipeline of two stages of one rank each; BACKEND cpu or cuda) on what each rank
holds of the inputs in IN (whole tensors, or IN/g.rankR.npy), then write OUT/NAME.rankR.npy
of its results and OUT/names.rankR.json: the tensors and results it has."""

import json
import sys
from pathlib import Path

import numpy as np

module_dir, inputs, outputs, backend = sys.argv[1:5]
sys.path.insert(0, module_dir)
import staged  # noqa: E402  (before mpi4py.MPI, as docs/ccn-language.md section 12 says)
from mpi4py import MPI  # noqa: E402

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
program = staged.Program(comm, {"B": 5, "H": 7}, "default")
tensors = {}
for name in program.tensor_names():
    local = Path(inputs) / f"{name}.rank{rank}.npy"
    tensors[name] = np.load(local if local.exists() else Path(inputs) / f"{name}.npy")
if backend == "cpu":
    results = program.step(tensors, seed=3, step=0)
else:  # the CUDA module writes outputs into host arrays passed for them
    mine = ("s", "own") if rank == 0 else ("full",)
    out = {name: np.empty(program.local_shape(name), np.float32) for name in mine}
    results = program.step(tensors, seed=3, step=0, out=out)
out = Path(outputs)
out.mkdir(exist_ok=True)
for name, value in results.items():
    np.save(out / f"{name}.rank{rank}.npy", value)
(out / f"names.rank{rank}.json").write_text(json.dumps(
    {"tensors": sorted(program.tensor_names()), "results": sorted(results)}))
