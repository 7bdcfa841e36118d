"""A C++ application uses the library `coconetc build --python` generates, through
add_subdirectory (without pybind11) and through find_package after `cmake --install`,
under the user's own mpirun without Open MPI's UCX errors (the library selects the
one-node components before the application's MPI_Init), and the sanitizers find nothing."""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import pytest

from parafuse.ccn_compiler.frontend import check_source
from parafuse.emitters.ccn.cpu.project import build_cpu_project
from parafuse.emitters.toolchain.cmake import Toolchain, build
from parafuse.emitters.toolchain.mpirun import run_ranks
from tests.conftest import SAMPLES
from tests.python_module_compare import adam_python_project
from tests.user_mpirun import assert_no_ucx_noise, user_environment

HERE = Path(__file__).parent / "embedding"


def expected_w(ranks: int) -> float:
    """Adam from m = v = 0 with every gradient 1 and w = 0.5 (params as in the sample)."""
    g = float(ranks)
    m1, v1 = (1 - 0.9) * g, (1 - 0.999) * g * g
    return 0.5 - 0.001 * m1 / (math.sqrt(v1) + 1e-8)


def _app(tmp_path: Path, variant: str, cmake_args: list[str]) -> Path:
    source = tmp_path / f"app_{variant}"
    source.mkdir()
    shutil.copy(HERE / "main.cpp", source / "main.cpp")
    shutil.copy(HERE / f"{variant}.cmake", source / "CMakeLists.txt")
    build(source, source / "build", Toolchain.current().cmake_args(mpi=True) + cmake_args)
    return source / "build" / "embed"


def _run(app: Path, ranks: int) -> float:
    mpirun = Toolchain.current().tool("mpirun")
    done = subprocess.run([mpirun, "--oversubscribe", "-np", str(ranks), str(app)], text=True,
                          capture_output=True, env=user_environment(ranks), timeout=120)
    assert done.returncode == 0, done.stderr
    assert_no_ucx_noise(done.stderr)
    return float(done.stdout.split("=")[1])


@pytest.fixture(scope="module")
def adam_project() -> Path:
    return adam_python_project()  # built with --python


def test_add_subdirectory(adam_project: Path, tmp_path: Path) -> None:
    """Inside another project the Python module is off by default: no pybind11 needed."""
    app = _app(tmp_path, "add_subdirectory", [f"-DADAM_DIR={adam_project}",
                                              "-DCMAKE_DISABLE_FIND_PACKAGE_pybind11=ON"])
    assert not list(app.parent.rglob("adam.*.so"))
    assert _run(app, 2) == pytest.approx(expected_w(2), rel=1e-6)


def test_find_package_after_install(adam_project: Path, tmp_path: Path) -> None:
    prefix = tmp_path / "prefix"
    cmake = Toolchain.current().tool("cmake")
    subprocess.run([cmake, "--install", str(adam_project / "build"), "--prefix", str(prefix)],
                   check=True, capture_output=True)
    assert (prefix / "include" / "adam.hpp").exists()
    app = _app(tmp_path, "find_package", [f"-DCMAKE_PREFIX_PATH={prefix}"])
    assert _run(app, 3) == pytest.approx(expected_w(3), rel=1e-6)


@pytest.mark.slow
def test_sanitizers_find_nothing(tmp_path: Path) -> None:
    module = check_source((SAMPLES / "lamb.ccn").read_text(), "samples/lamb.ccn")
    project = build_cpu_project(module, "lamb", ["default", "fused"], "test", tmp_path / "lamb",
                                sanitize=True)
    for built, symbols in ((project / "build" / "lamb_run", ["nm", "-D"]),
                           (project / "build" / "liblamb.a", ["nm"])):
        listed = subprocess.run([*symbols, str(built)], capture_output=True, text=True,
                                check=True).stdout
        assert "__asan_" in listed and "__ubsan_handle_" in listed, f"{built.name} not sanitized"
    for schedule in ("default", "fused"):
        done = run_ranks(project, "lamb", 2, ["--size", "N=1001", "--random", "--iters", "2",
                                              "--schedule", schedule], asan=True)
        assert done.returncode == 0, done.stderr
        assert "runtime error" not in done.stderr and "AddressSanitizer" not in done.stderr
