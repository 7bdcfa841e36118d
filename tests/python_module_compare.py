"""The generated `adam` Python module of a backend, run under mpirun with mpi4py by
tests/e2e/python_module/step_adam.py on numpy blocks (two steps), against the reference
interpreter on the same inputs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from parafuse.ccn_compiler.reference.tolerances import assert_close
from parafuse.emitters.ccn.cpu.project import build_cpu_project
from parafuse.emitters.toolchain.cmake import Toolchain
from parafuse.emitters.toolchain.mpirun import launch_environment
from tests.backend_compare import sample_module
from tests.conftest import REPO
from tests.user_mpirun import assert_no_ucx_noise, user_environment

SCRIPT = Path(__file__).parent / "e2e" / "python_module" / "step_adam.py"


def adam_python_project() -> Path:
    """samples/adam.ccn's CPU project with the Python module (three schedules), built once
    per content for every test that uses it."""
    module = sample_module("adam")
    return build_cpu_project(module, "adam", ["default", "zero", "fused"],
                             "coconetc build samples/adam.ccn --python", python=True)


def assert_adam_module_matches_reference(build: Path, schedule: str, tmp_path: Path,
                                         env: dict[str, str] | None = None,
                                         users_mpirun: bool = False) -> None:
    """Random inputs (N = 1001, 2 ranks) through the module in `build` and through
    `coconetc run`; the states of both agree at the gradient's (f16) tolerance. With
    `users_mpirun`, launched as a user would (tests/user_mpirun.py): no UCX errors."""
    rng = np.random.default_rng(5)
    (tmp_path / "in").mkdir()
    for r in range(2):
        np.save(tmp_path / "in" / f"g.rank{r}.npy", rng.uniform(-1, 1, 1001).astype(np.float16))
    for name in ("w", "m", "v"):
        values = rng.uniform(0 if name == "v" else -1, 1, 1001).astype(np.float32)
        np.save(tmp_path / "in" / f"{name}.npy", values)
    mpirun = Toolchain.current().tool("mpirun")
    done = subprocess.run([mpirun, "--oversubscribe", "-np", "2", sys.executable, str(SCRIPT),
                           str(build), schedule, str(tmp_path / "in"), str(tmp_path / "py")],
                          capture_output=True, text=True,
                          env={**(user_environment(2) if users_mpirun else launch_environment(2)),
                               **(env or {})}, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    if users_mpirun:
        assert_no_ucx_noise(done.stderr)
    reference = subprocess.run(
        [str(Path(sys.executable).parent / "coconetc"), "run", "samples/adam.ccn", "--schedule",
         schedule, "-n", "2", "--size", "N=1001", "--inputs", str(tmp_path / "in"),
         "--outputs", str(tmp_path / "ref"), "--iters", "2", "--param", "lr=0.01"],
        cwd=REPO, capture_output=True, text=True)
    assert reference.returncode == 0, reference.stderr
    for name in ("w", "m", "v"):
        for r in range(2):
            assert_close(np.load(tmp_path / "py" / f"{name}.rank{r}.npy"),
                         np.load(tmp_path / "ref" / f"{name}.rank{r}.npy"), "f16", name)
