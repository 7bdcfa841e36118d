"""Run a compiled backend's runner and compare its output files with the reference
interpreter, per docs/ccn-language.md section 13 (sharded and sliced results compared as logical
values)."""

from __future__ import annotations

import functools
import json
import re
import subprocess
from pathlib import Path

import numpy as np

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.frontend import CheckedModule, check_source
from parafuse.ccn_compiler.reference.tolerances import EXACT_DTYPES, assert_close, dependency_dtype
from parafuse.emitters.ccn.cpu.project import build_cpu_project
from parafuse.emitters.toolchain.cmake import Toolchain
from parafuse.emitters.toolchain.mpirun import run_ranks
from tests.conftest import SAMPLES
from tests.schedule_compare import logical_values, run_schedule


def load_results(out: Path, program: ir.Program, ranks: int) -> dict[str, list[np.ndarray]]:
    manifest = json.loads((out / "manifest.json").read_text())
    names = [entry["name"] for entry in manifest["outputs"]]
    assert names == [n for n, _, _ in program.result_types()], names
    results = {}
    for entry in manifest["outputs"]:  # None for a rank of another pipeline stage
        arrays = [np.load(out / f"{entry['name']}.rank{r}.npy")
                  if f"{entry['name']}.rank{r}.npy" in entry["files"] else None
                  for r in range(ranks)]
        if entry["dtype"] == "bf16":
            import ml_dtypes
            arrays = [None if a is None else a.view(ml_dtypes.bfloat16) for a in arrays]
        results[entry["name"]] = arrays
    return results


def assert_backend_matches_reference(project: Path, default: ir.Program, scheduled: ir.Program,
                                     schedule: str, ranks: int, sizes: dict[str, int],
                                     out: Path, iters: int = 3, seed: int = 7,
                                     cli: tuple[str, str] | None = None) -> None:
    """The project's runner (or, with `cli` = (FILE, BACKEND), `coconetc run FILE --backend
    BACKEND`, from the current folder) against the reference interpreter."""
    args = ["--schedule", schedule, "--random", "--seed", str(seed), "--iters", str(iters),
            "--outputs", str(out)]
    args += [a for name, value in sizes.items() for a in ("--size", f"{name}={value}")]
    if cli is None:
        done = run_ranks(project, default.name, ranks, args)
        assert done.returncode == 0, done.stderr
    else:
        from click.testing import CliRunner

        from parafuse.cli.coconetc import main
        ran = CliRunner().invoke(main, ["run", cli[0], "--backend", cli[1], "-n", str(ranks),
                                        *args], catch_exceptions=False)
        assert ran.exit_code == 0, ran.output
    world, expected = run_schedule(scheduled, ranks, sizes, iters, seed)
    expected = logical_values(scheduled, world, expected)
    actual = logical_values(scheduled, world, load_results(out, scheduled, ranks))
    assert set(actual) == set(expected), f"results {sorted(actual)} vs {sorted(expected)}"
    for file_name, values in expected.items():
        value_name = dict(scheduled.result_names())[file_name]
        assert len(actual[file_name]) == len(values), f"{file_name}: one array per rank"
        for rank, (a, b) in enumerate(zip(actual[file_name], values, strict=True)):
            assert_result_agrees(scheduled, value_name, a, b,
                                 f"{schedule} R={ranks} {file_name} (rank {rank})")


def assert_result_agrees(program: ir.Program, value_name: str, actual: np.ndarray,
                         expected: np.ndarray, what: str) -> None:
    """docs/ccn-language.md section 13: a dropout's mask (the zeros it produces) bit for
    bit, an integer or boolean result exactly, anything else at the tolerance of the
    lowest precision it depends on."""
    if is_dropout(program, value_name):
        dropped, expected_dropped = np.asarray(actual) == 0, np.asarray(expected) == 0
        assert dropped.shape == expected_dropped.shape, f"{what}: shape differs"
        differ = int(np.count_nonzero(dropped != expected_dropped))
        assert differ == 0, f"{what}: the dropout mask differs in {differ} elements"
    own = program.value_type(value_name).dtype
    dtype = own if own in EXACT_DTYPES else dependency_dtype(program, value_name)
    assert_close(actual, expected, dtype, what)


def is_dropout(program: ir.Program, value_name: str) -> bool:
    """Whether the value is a dropout's result (through casts), so its zeros are a mask."""
    stage = program.stage(value_name)
    expr = stage.expr if isinstance(stage, ir.ElementwiseStage) else None
    while isinstance(expr, ir.Cast):
        expr = expr.operand
    return isinstance(expr, ir.Dropout)



@functools.cache
def sample_module(sample: str) -> CheckedModule:
    return check_source((SAMPLES / f"{sample}.ccn").read_text(), f"samples/{sample}.ccn")


def build_commands(project: Path) -> list[str]:
    """The commands of a configured project's build (ninja -t commands), one a line."""
    return subprocess.run([Toolchain.current().tool("ninja"), "-t", "commands"],
                          cwd=project / "build", capture_output=True, text=True,
                          check=True).stdout.splitlines()


def optimisation_levels(project: Path) -> dict[str, str]:
    """The optimisation flag each C++ or CUDA source of a configured project is compiled
    with (the last -O of its command, as the compiler reads them), by file name."""
    levels = {}
    for line in build_commands(project):
        source = re.search(r" -c (\S+\.(?:cpp|cu))(?: |$)", line)
        if source:
            levels[Path(source[1]).name] = re.findall(r" (-O\w)(?= )", line)[-1]
    return levels


@functools.cache
def sample_project(sample: str) -> Path:
    """The CPU project of a sample with all its schedules, built once per content."""
    module = sample_module(sample)
    return build_cpu_project(module, sample, module.schedule_names(sample),
                             f"coconetc build samples/{sample}.ccn")
