"""Run a compiled backend's runner and compare its output files with the reference
interpreter, per docs/ccn-language.md section 13 (sharded and sliced results compared as logical
values)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.frontend import CheckedModule, check_source
from parafuse.ccn_compiler.tolerances import assert_close, dependency_dtype
from parafuse.emitters.ccn.cpu.project import build_cpu_project
from parafuse.emitters.toolchain.mpirun import run_ranks
from tests.conftest import SAMPLES
from tests.schedule_compare import logical_values, run_schedule


def load_results(out: Path, program: ir.Program, ranks: int) -> dict[str, list[np.ndarray]]:
    manifest = json.loads((out / "manifest.json").read_text())
    names = [entry["name"] for entry in manifest["outputs"]]
    assert names == [n for n, _, _ in program.result_types()], names
    results = {}
    for entry in manifest["outputs"]:
        arrays = [np.load(out / f"{entry['name']}.rank{r}.npy") for r in range(ranks)]
        if entry["dtype"] == "bf16":
            import ml_dtypes
            arrays = [a.view(ml_dtypes.bfloat16) for a in arrays]
        results[entry["name"]] = arrays
    return results


def assert_backend_matches_reference(project: Path, default: ir.Program, scheduled: ir.Program,
                                     schedule: str, ranks: int, sizes: dict[str, int],
                                     out: Path, iters: int = 3, seed: int = 7) -> None:
    args = ["--schedule", schedule, "--random", "--seed", str(seed), "--iters", str(iters),
            "--outputs", str(out)]
    args += [a for name, value in sizes.items() for a in ("--size", f"{name}={value}")]
    done = run_ranks(project, default.name, ranks, args)
    assert done.returncode == 0, done.stderr
    world, expected = run_schedule(scheduled, ranks, sizes, iters, seed)
    expected = logical_values(scheduled, world, expected)
    actual = logical_values(scheduled, world, load_results(out, scheduled, ranks))
    for file_name, values in expected.items():
        value_name = dict(scheduled.result_names())[file_name]
        dtype = dependency_dtype(scheduled, value_name)
        for rank, (a, b) in enumerate(zip(actual[file_name], values)):
            assert_close(a, b, dtype, f"{schedule} R={ranks} {file_name} (rank {rank})")



@functools.cache
def sample_module(sample: str) -> CheckedModule:
    return check_source((SAMPLES / f"{sample}.ccn").read_text(), f"samples/{sample}.ccn")


@functools.cache
def sample_project(sample: str) -> Path:
    """The CPU project of a sample with all its schedules, built once per content."""
    module = sample_module(sample)
    return build_cpu_project(module, sample, module.schedule_names(sample),
                             f"coconetc build samples/{sample}.ccn")
