"""The wheel as a user installs it: built from the repository's files, installed (not
editable) with its dependencies into a new virtual environment, and used from a folder
outside the repository: `coconetc build` and the runner of one sample, `boostfsm compile`
and `boostfsm run` of another, every template and runtime header found in the package."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.required_tools import require_cxx

REPO = Path(__file__).resolve().parents[2]
# What the wheel is built from: the repository less what it never ships.
NOT_SHIPPED = shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__",
                                     ".hypothesis", ".pytest_cache", "tests", "bench", "out")
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env)
    assert done.returncode == 0, f"{' '.join(args)}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The bin folder of a new virtual environment with the wheel installed in it."""
    require_cxx()
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    shutil.copytree(REPO, source, ignore=NOT_SHIPPED)
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(work / "dist"), str(source)], work)
    wheel = next((work / "dist").glob("parafuse-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for shipped in ("parafuse/ccn_compiler/schedules/__init__.py",
                    "parafuse/grammar/ccn.lark", "parafuse/emitters/templates/fsm/runner.cpp.j2",
                    "parafuse/cpp_runtime/fsm/core/engine.hpp",
                    "parafuse/cpp_runtime/ccn/runner.hpp"):
        assert shipped in names, shipped
    assert not [name for name in names if name.startswith(("tests/", "parafuse/tests/"))]
    run([sys.executable, "-m", "venv", "--without-pip", str(work / "venv")], work)
    venv_python = str(work / "venv" / "bin" / "python")
    run([sys.executable, "-m", "pip", "--python", venv_python, "install", "-q", str(wheel)], work)
    return work / "venv" / "bin"


@pytest.mark.slow
def test_wheel_installs_and_both_compilers_run_outside_the_repository(installed,
                                                                      tmp_path) -> None:
    env = {**os.environ, **MPI_ENV, "PATH": f"{installed}:{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    located = run([str(installed / "python"), "-c", "import parafuse; print(parafuse.__file__)"],
                  tmp_path, env)
    assert located.startswith(str(installed.parent)), located  # not the repository's
    shutil.copy(REPO / "samples" / "sgd.ccn", tmp_path)
    shutil.copy(REPO / "samples" / "div7.fsm", tmp_path)

    run([str(installed / "coconetc"), "build", "sgd.ccn", "-o", "sgd"], tmp_path, env)
    run([str(installed / "mpirun"), "--oversubscribe", "-np", "2", "sgd/build/sgd_run",
         "--size", "N=1001", "--random", "--outputs", "out"], tmp_path, env)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert {output["name"] for output in manifest["outputs"]} >= {"w"}

    (tmp_path / "bits.txt").write_text("111\n1010\n110\n")  # 7, 10, 6: one divisible by 7
    run([str(installed / "boostfsm"), "compile", "div7.fsm", "-o", "div7"], tmp_path, env)
    result = json.loads(run([str(installed / "boostfsm"), "run", "div7.fsm", "bits.txt",
                             "--json"], tmp_path, env))
    reference = json.loads(run([str(installed / "boostfsm"), "run", "div7.fsm", "bits.txt",
                                "--backend", "reference", "--json"], tmp_path, env))
    assert result["counts"] == reference["counts"] and result["counts"], result
    assert (tmp_path / "div7" / "build" / "div7_run").exists()
    # the GPU project on the emulated device: its templates and runtime (.cuh, .cu) shipped
    gpu = json.loads(run([str(installed / "boostfsm"), "run", "div7.fsm", "bits.txt",
                          "--backend", "cuda-emulated", "--json"], tmp_path, env))
    assert gpu["counts"] == reference["counts"], gpu
    package = Path(located).parent
    assert (package / "cpp_runtime" / "fsm" / "cuda" / "table_driver.cu").exists()
