"""The runner contract of docs/ccn-language.md section 10 on the Python side: options, .npy in and
out.

Everything is validated before any step runs; a problem is one `RunnerInputError`
naming the file or option. Outputs are written to temporary names and renamed.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
from pathlib import Path

import ml_dtypes
import numpy as np

from parafuse.grammar.diagnostics import CompileError

from .. import ir
from ..numerics import NUMPY_DTYPES, dtype_range, fits_dtype
from ..types import is_int
from . import philox
from .values import PerRank, World


class RunnerInputError(CompileError):
    """Bad runner input: a missing or mis-shaped file, an unknown size or param."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message, None, hint=hint)


def _key_values(items: tuple[str, ...], option: str) -> dict[str, str]:
    """`NAME=VALUE` items, spaces around the name and the value dropped (as the compiled
    runners do); a name given twice is an error, not the last one taken."""
    out = {}
    for item in items:
        name, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not name:
            raise RunnerInputError(f"{option} {item}: expected NAME=VALUE")
        if name in out:
            raise RunnerInputError(f"{option} {name} given twice ({name}={out[name]} and "
                                   f"{name}={value})")
        out[name] = value
    return out


def parse_sizes(program: ir.Program, items: tuple[str, ...]) -> dict[str, int]:
    given = _key_values(items, "--size")
    for name in given:
        if name not in program.size_vars:
            raise RunnerInputError(f"--size {name}: program '{program.name}' has no size "
                                   f"variable '{name}' (it has: {', '.join(program.size_vars)})")
    sizes = {}
    for name in program.size_vars:
        if name not in given:
            raise RunnerInputError(f"missing --size {name}=...: program '{program.name}' "
                                   f"needs {', '.join(program.size_vars)}")
        try:
            if "_" in given[name]:  # Python reads 10_0; the compiled runners do not
                raise ValueError(given[name])
            sizes[name] = int(given[name])
            if sizes[name] > INT64_MAX:  # the compiled runners read a size as an int64
                raise ValueError(given[name])
        except ValueError:
            raise RunnerInputError(f"--size {name}={given[name]}: not an integer") from None
        if sizes[name] < 1:
            raise RunnerInputError(f"--size {name}={given[name]}: sizes must be at least 1")
    return sizes


INT64_MAX = 2**63 - 1


def too_big(sizes: dict[str, int]) -> RunnerInputError:
    """The compiled runners' error for sizes whose tensors cannot be allocated."""
    named = " ".join(f"{name}={value}" for name, value in sizes.items())
    return RunnerInputError(f"sizes {named}: this rank's tensors do not fit in memory")


def check_fits(program: ir.Program, world: World) -> None:
    """`too_big` where the inputs' and states' bytes alone pass what an address can count
    (numpy would fail with an unhelpful ValueError rather than a MemoryError)."""
    total = 0
    for tensor in program.tensors:
        count = 1
        for n in world.shape(tensor.type):
            count *= n
        copies = world.ranks if tensor.type.layout.kind == "local" else 1
        total += count * copies * NUMPY_DTYPES[tensor.type.dtype].itemsize
    if total > np.iinfo(np.intp).max:
        raise too_big(world.sizes)


def check_folders(inputs: str | None, outputs: str | None, random: bool) -> None:
    """`--inputs` and `--outputs` name a folder each; `--random` replaces `--inputs`."""
    for option, path in (("--inputs", inputs), ("--outputs", outputs)):
        if path is not None and not path.strip():
            raise RunnerInputError(f"{option}: an empty path")
    if random and inputs is not None:
        raise RunnerInputError("--inputs and --random: give one (--random fills every input)")


def parse_params(program: ir.Program, items: tuple[str, ...]) -> dict[str, np.ndarray]:
    given = _key_values(items, "--param")
    declared = {p.name: p for p in program.params}
    for name in given:
        if name not in declared:
            raise RunnerInputError(f"--param {name}: program '{program.name}' has no param "
                                   f"'{name}'")
    values = {}
    for name, param in declared.items():
        text = given.get(name)
        if text is None and param.default is None:
            raise RunnerInputError(f"missing --param {name}=...: it has no default")
        number = param.default if text is None else _number(name, text, param.dtype)
        with np.errstate(over="ignore", invalid="ignore"):
            values[name] = np.asarray(number).astype(NUMPY_DTYPES[param.dtype])
    return values


def _number(name: str, text: str, dtype: str) -> int | float:
    """`--param NAME=TEXT` as a `dtype` number: an integer, or a float the dtype can hold
    without rounding to infinity (`inf` and `nan` written out are taken as they are)."""
    try:
        if "_" in text:  # Python reads 1_000; the compiled runners do not
            raise ValueError(text)
        number = int(text) if is_int(dtype) else float(text)
    except ValueError:
        raise RunnerInputError(f"--param {name}={text}: not a {dtype} number") from None
    spelled_out = text.lstrip("+-").lower() in ("inf", "infinity", "nan")
    if not spelled_out and not fits_dtype(number, dtype):
        raise RunnerInputError(f"--param {name}={text}: not a {dtype} number",
                               hint=f"out of range: {dtype} holds {dtype_range(dtype)}")
    return number


def check_ranks(program: ir.Program, ranks: int) -> None:
    if ranks < 1:
        raise RunnerInputError(f"-n {ranks}: at least one rank is needed")
    for group in program.groups:
        if ranks % group.blocks:
            raise RunnerInputError(f"{ranks} ranks cannot be split into {group.blocks} equal "
                                   f"blocks for group '{group.name}'",
                                   hint=f"run with a multiple of {group.blocks} ranks")
    for stage in program.flat_stages():
        if isinstance(stage, ir.CollectiveStage) and stage.op == "broadcast":
            size = ranks // next((g.blocks for g in program.groups if g.name == stage.group), 1)
            if stage.root >= size:
                raise RunnerInputError(f"broadcast root {stage.root} of stage '{stage.name}' is "
                                       f"not a rank of its block ({size} ranks)")


def _file_names(tensor: ir.Tensor, ranks: list[int]) -> list[str]:
    if tensor.type.layout.kind == "local":
        return [f"{tensor.name}.rank{r}.npy" for r in ranks]
    return [f"{tensor.name}.npy"]


def _load(path: Path, tensor: ir.Tensor, shape: tuple[int, ...]) -> np.ndarray:
    if not path.is_file():
        raise RunnerInputError(f"{path}: missing file for {tensor.role} '{tensor.name}'",
                               hint="create it, or pass --random to fill inputs")
    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:  # EOFError: an empty file
        raise RunnerInputError(f"{path}: not a readable .npy file ({exc})") from None
    dtype = tensor.type.dtype
    if dtype == "bf16" and array.dtype.kind == "V" and array.dtype.itemsize == 2:
        array = array.view(ml_dtypes.bfloat16)
    if array.dtype != NUMPY_DTYPES[dtype]:
        raise RunnerInputError(f"{path}: dtype {array.dtype} but '{tensor.name}' is {dtype}")
    if array.shape != shape:
        raise RunnerInputError(f"{path}: shape {list(array.shape)} but '{tensor.name}' is "
                               f"{list(shape)}")
    return array


def load_tensors(program: ir.Program, world: World, inputs: str | None,
                 random: bool) -> dict[str, PerRank]:
    """Every input and initial state, distributed to the ranks by its layout."""
    loaded: dict[str, PerRank] = {}
    for tensor in program.tensors:
        shape = world.shape(tensor.type)
        local = tensor.type.layout.kind == "local"
        holders = [r for r in range(world.ranks)
                   if world.topology.holds(program.placement(tensor.name), r)]
        if random:
            wholes = [philox.random_tensor(shape, tensor.type.dtype, world.seed, tensor.ordinal,
                                           r if local else 0)
                      for r in (holders if local else [0])]
        elif inputs is None:
            raise RunnerInputError(f"no value for {tensor.role} '{tensor.name}'",
                                   hint="pass --inputs DIR or --random")
        else:
            wholes = [_load(Path(inputs) / name, tensor, shape)
                      for name in _file_names(tensor, holders)]
        if local:  # a rank off the tensor's stage holds zeros it never shows
            by_rank = dict(zip(holders, wholes))
            loaded[tensor.name] = [by_rank.get(r, np.zeros(shape, wholes[0].dtype))
                                   for r in range(world.ranks)]
        else:
            loaded[tensor.name] = world.take_blocks(wholes[0], tensor.type)
    return loaded


def prepare_outputs(out_dir: str) -> list[Path]:
    """Create the `--outputs` folder before any step, as the compiled runners do; return the
    folders this made (`write_outputs` removes them again if writing fails). A folder that
    cannot be made or written to is a `RunnerInputError` naming it and the OS's reason."""
    out = Path(out_dir)
    created = [p for p in [*reversed(out.parents), out] if not p.exists()]
    problem = next((f"{os.strerror(errno.ENOTDIR)} ('{p}' is a file)"
                    for p in [*reversed(out.parents), out] if p.exists() and not p.is_dir()),
                   None)
    if problem is None:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            problem = exc.strerror or str(exc)
    if problem is None and not os.access(out, os.W_OK | os.X_OK):
        problem = os.strerror(errno.EACCES)
    if problem is not None:
        remove_empty(created)
        raise RunnerInputError(f"--outputs {out_dir}: cannot write the output folder: {problem}")
    return created


def remove_empty(folders: list[Path]) -> None:
    """Remove the folders `prepare_outputs` made, innermost first, where they are empty."""
    for folder in reversed(folders):
        try:
            folder.rmdir()
        except OSError:
            return


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _staged(path: Path, write) -> Path:
    """`write(handle)` into a temporary file next to `path`; the temporary's path. Its mode
    is that of a file created normally (0666 less the umask), not mkstemp's 0600."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), 0o666 & ~_umask())
            write(handle)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def _npy_writer(array: np.ndarray):
    if array.dtype == NUMPY_DTYPES["bf16"]:
        array = array.view(np.dtype("V2"))
    return lambda handle: np.save(handle, array, allow_pickle=False)


def write_outputs(program: ir.Program, world: World, results: dict[str, PerRank],
                  out_dir: str, schedule: str, created: list[Path] | None = None) -> None:
    """Every output file and the manifest, written to temporary names and renamed only when
    all are written: a failure leaves no new file (and no folder `prepare_outputs` made)."""
    out = Path(out_dir)
    if created is None:
        created = prepare_outputs(out_dir)
    staged: list[tuple[Path, Path]] = []
    entries = []
    try:
        for file_name, value_name, vt in program.result_types():
            files = []
            placement = program.placement(value_name)
            for rank, array in enumerate(results[file_name]):
                if not world.topology.holds(placement, rank):
                    continue  # a value of another pipeline stage
                name = f"{file_name}.rank{rank}.npy"
                staged.append((_staged(out / name, _npy_writer(array)), out / name))
                files.append(name)
            entry = {"name": file_name, "value": value_name, "dtype": vt.dtype,
                     "shape": list(world.shape(vt)), "layout": str(vt.layout),
                     "files": files}
            if placement is not None:
                entry["stage"] = str(placement)
            entries.append(entry)
        manifest = {"program": program.name, "schedule": schedule, "ranks": world.ranks,
                    "sizes": world.sizes, "outputs": entries}
        text = (json.dumps(manifest, indent=2) + "\n").encode()
        staged.append((_staged(out / "manifest.json", lambda h: h.write(text)),
                       out / "manifest.json"))
        for temporary, final in staged:
            os.replace(temporary, final)
    except OSError as exc:
        for temporary, _ in staged:
            temporary.unlink(missing_ok=True)
        remove_empty(created)
        where = f" ('{exc.filename}')" if exc.filename else ""
        raise RunnerInputError(f"--outputs {out_dir}: cannot write the outputs: "
                               f"{exc.strerror or exc}{where}") from None
