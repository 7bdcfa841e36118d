"""Running `coconetc run` on a sample and checking what it wrote against expected values.

Shared by the reference tests here and, later, by every backend: the same command
with another `--backend` must write the same files.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
from sample_cases import NUMPY_DTYPES, Output, SampleCase

from parafuse.ccn_compiler.reference.tolerances import assert_close

SEED = 11
ITERS = 2


def coconetc_command() -> list[str]:
    script = Path(sys.executable).parent / "coconetc"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "parafuse.cli.coconetc"]


def run_reference(case: SampleCase, ranks: int, tmp: Path, sizes: dict[str, int] | None = None,
                  random: bool = False, backend: str = "reference",
                  extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """`coconetc run` on `tmp/in` (or `--random`), writing `tmp/out`."""
    sizes = sizes or case.sizes
    command = [*coconetc_command(), "run", str(case.path), "--program", case.program,
               "--backend", backend, "-n", str(ranks)]
    for name, value in sizes.items():
        command += ["--size", f"{name}={value}"]
    for name, value in case.params.items():
        command += ["--param", f"{name}={value}"]
    command += ["--random"] if random else ["--inputs", str(tmp / "in")]
    command += ["--outputs", str(tmp / "out"), "--iters", str(ITERS), "--seed", str(SEED)]
    command += list(extra)
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def load_output(path: Path, dtype: str) -> np.ndarray:
    """Read an output `.npy`; bf16 files hold `<V2`/`|V2` and are viewed as bfloat16."""
    array = np.load(path)
    if dtype == "bf16":
        assert array.dtype.kind == "V" and array.dtype.itemsize == 2, (
            f"{path.name}: bf16 stored as {array.dtype}, expected V2")
        return array.view(ml_dtypes.bfloat16)
    return array


def manifest_entries(manifest: object) -> dict[str, dict]:
    """The manifest's entry per output name, whether it is a list, a dict of lists or a map."""
    if isinstance(manifest, dict):
        if isinstance(manifest.get("outputs"), list):
            return manifest_entries(manifest["outputs"])
        lists = [v for v in manifest.values() if isinstance(v, list)]
        if lists:
            return manifest_entries(lists[0])
        return {name: entry for name, entry in manifest.items() if isinstance(entry, dict)}
    assert isinstance(manifest, list), f"manifest.json is neither a list nor an object: {manifest}"
    return {entry["name"]: entry for entry in manifest}


def check_manifest(out: Path, case: SampleCase) -> None:
    entries = manifest_entries(json.loads((out / "manifest.json").read_text()))
    assert set(entries) == {o.name for o in case.outputs}, f"manifest lists {sorted(entries)}"
    for output in case.outputs:
        entry = entries[output.name]
        shape = entry.get("shape", entry.get("logical_shape"))
        assert entry.get("dtype") == output.dtype, f"manifest {output.name}: {entry}"
        assert list(shape) == [case.sizes[d] for d in output.dims], f"manifest: {entry}"
        assert entry.get("layout") == output.layout, f"manifest {output.name}: {entry}"
        assert entry.get("stage") == output.stage, f"manifest {output.name}: {entry}"


def check_outputs(out: Path, case: SampleCase, ranks: int, expected: dict) -> None:
    """Every rank's file of every output; none where the oracle says the rank holds None
    (a rank of another pipeline stage)."""
    expected_files = {f"{o.name}.rank{r}.npy" for o in case.outputs for r in range(ranks)
                      if expected[o.name][r] is not None}
    written = {p.name for p in out.iterdir()} - {"manifest.json"}
    assert written == expected_files, (
        f"written {sorted(written)}, expected {sorted(expected_files)}")
    for output in case.outputs:
        for rank in range(ranks):
            if expected[output.name][rank] is not None:
                check_one_file(out / f"{output.name}.rank{rank}.npy", output,
                               expected[output.name][rank])


def check_one_file(path: Path, output: Output, expected: np.ndarray) -> None:
    held = load_output(path, output.dtype)
    assert held.dtype == np.dtype(NUMPY_DTYPES[output.dtype]), f"{path.name}: {held.dtype}"
    assert_close(held, expected, output.tolerance, path.name)
