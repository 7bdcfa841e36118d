"""Run under mpirun: two steps of the generated `adam` module on each rank's blocks of the
inputs in IN (whole tensors, or IN/g.rankR.npy), then write OUT/NAME.rankR.npy."""

import sys
from pathlib import Path

import numpy as np

module_dir, schedule, inputs, outputs = sys.argv[1:5]
sys.path.insert(0, module_dir)
import adam  # noqa: E402  (before mpi4py.MPI, as docs/ccn-language.md section 12 says)
from mpi4py import MPI  # noqa: E402

comm = MPI.COMM_WORLD
rank, ranks = comm.Get_rank(), comm.Get_size()
program = adam.Program(comm, {"N": 1001}, schedule)
tensors = {}
for name in program.tensor_names():
    path = Path(inputs) / (f"{name}.rank{rank}.npy" if name == "g" else f"{name}.npy")
    whole = np.load(path)
    shape = program.local_shape(name)
    if list(whole.shape) != list(shape):  # a sliced state: this rank's block
        b = -(-whole.shape[0] // ranks)
        whole = whole[min(rank * b, whole.shape[0]):min((rank + 1) * b, whole.shape[0])]
    tensors[name] = np.ascontiguousarray(whole)
before = {name: array.copy() for name, array in tensors.items()}
for step in range(2):
    results = program.step(tensors, seed=0, step=step, params={"lr": 0.01})
assert all(results[name] is tensors[name] for name in ("w", "m", "v"))  # updated in place
for name in ("w", "m", "v"):  # the arrays passed hold the new values
    assert not np.array_equal(tensors[name], before[name]), f"state {name} was not updated"
assert np.array_equal(tensors["g"], before["g"]), "the input g was written"
strided = dict(tensors, w=np.repeat(tensors["w"], 2)[::2])  # a state that is a copy's view
try:
    program.step(strided)
    raise SystemExit("a strided state was accepted")
except ValueError as error:
    assert "'w' must be" in str(error) and "contiguous" in str(error), error
# what the runner refuses, the module refuses alike, before any step (states untouched)
kept = {name: tensors[name].copy() for name in ("w", "m", "v")}
for make_bad, error, words in (
        (lambda: adam.Program(comm, {"N": 1001, "M": 3}, schedule), KeyError, "no size 'M'"),
        (lambda: adam.Program(comm, {"N": 0}, schedule), ValueError,
         "N=0: sizes must be at least 1"),
        (lambda: adam.Program(comm, {"N": 2**62}, schedule), ValueError, "do not fit in memory"),
        (lambda: program.step(dict(tensors, W=tensors["w"])), KeyError, "no input or state 'W'"),
        (lambda: program.step(tensors, params={"lr": 1e39}), ValueError, "not a f32 number"),
        (lambda: program.step(tensors, params={"lr": 0.5, "lrr": 0.5}), KeyError,
         "no param 'lrr'"),
        # (numpy's __dlpack__ refuses it for the CUDA module: BufferError)
        (lambda: program.step(dict(
            tensors, g=tensors["g"].astype(tensors["g"].dtype.newbyteorder(">")))),
         (TypeError, BufferError), "native byte order")):
    try:
        make_bad()
        raise SystemExit(f"accepted: {words}")
    except error as refused:
        assert words in str(refused), refused
assert all(np.array_equal(tensors[name], kept[name]) for name in kept)
# each call's params are the defaults overridden by that call's: none persist, and a call
# that raised above applied none of its own (lr=0.5 with the unknown 'lrr')
def next_w(params):
    states = {name: kept[name].copy() for name in ("w", "m", "v")}
    step_args = {"seed": 0, "step": 2} | ({} if params is None else {"params": params})
    program.step(dict(tensors, **states), **step_args)
    return states["w"]
with_default = next_w(None)
assert np.array_equal(next_w({"lr": 0.001}), with_default)  # samples/adam.ccn: lr = 0.001
assert not np.array_equal(next_w({"lr": 1.0}), with_default)
assert np.array_equal(next_w(None), with_default), "lr=1.0 persisted into the next call"
Path(outputs).mkdir(exist_ok=True)
for name, array in results.items():
    np.save(Path(outputs) / f"{name}.rank{rank}.npy", array)
