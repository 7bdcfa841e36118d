"""PARAFUSE_OPTIMIZE: one optimisation level for every unit of every generated project
(the test suite builds at -O1, tests/conftest.py); unset, each project keeps its own levels
(-O3 for the code that runs, -O1 for a ccn runner's own code); a bad value is one line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from parafuse.emitters.ccn.cpu import project as cpu
from parafuse.emitters.ccn.cuda import project as cuda
from parafuse.emitters.fsm.project import cmake_arguments as fsm_cmake_arguments
from parafuse.emitters.toolchain.cmake import Toolchain, write_tree
from parafuse.emitters.toolchain.nvidia import find_nvcc
from tests.backend_compare import build_commands, optimisation_levels, sample_module
from tests.conftest import REPO, SAMPLES
from tests.required_tools import require_cxx, require_nvcc

BIN = Path(sys.executable).parent


def configured(folder: Path, args: list[str]) -> dict[str, str]:
    """Configure the project in `folder` (no build) and read each unit's level."""
    subprocess.run([Toolchain.current().tool("cmake"), "-S", str(folder), "-B",
                    str(folder / "build"), *args], check=True, capture_output=True)
    return optimisation_levels(folder)


def ccn_levels(folder: Path, backend: str) -> dict[str, str]:
    module = sample_module("sgd")
    if backend == "cuda":
        nvcc = find_nvcc()
        write_tree(folder, cuda.project_files(module, "sgd", ["default"], "test", "90"))
        return configured(folder, cuda.cmake_arguments(nvcc))
    write_tree(folder, cpu.project_files(module, "sgd", ["default"], "test"))
    return configured(folder, cpu.cmake_arguments())


def fsm_levels(folder: Path) -> dict[str, str]:
    subprocess.run([str(BIN / "boostfsm"), "compile", str(SAMPLES / "div7.fsm"), "--no-build",
                    "-o", str(folder)], check=True, capture_output=True)
    return configured(folder, fsm_cmake_arguments(python=False))


def test_unset_each_project_keeps_its_own_levels(tmp_path, monkeypatch) -> None:
    require_cxx()
    monkeypatch.delenv("PARAFUSE_OPTIMIZE")
    assert ccn_levels(tmp_path / "ccn", "cpu") == {"sgd.cpp": "-O3", "sgd_run.cpp": "-O1",
                                                "runner_main.cpp": "-O1"}
    assert set(fsm_levels(tmp_path / "fsm").values()) == {"-O3"}


@pytest.mark.parametrize("level", ["-O2", "-O0"])
def test_the_variable_names_the_level_of_every_unit(level, tmp_path, monkeypatch) -> None:
    require_cxx()
    monkeypatch.setenv("PARAFUSE_OPTIMIZE", level)
    assert set(ccn_levels(tmp_path / "ccn", "cpu").values()) == {level}
    fsm = fsm_levels(tmp_path / "fsm")
    assert len(fsm) >= 3 and set(fsm.values()) == {level}, fsm


def test_the_cuda_project_follows_it_too(tmp_path, monkeypatch) -> None:
    require_nvcc()
    monkeypatch.delenv("PARAFUSE_OPTIMIZE")
    assert ccn_levels(tmp_path / "default", "cuda") == {"sgd.cu": "-O3", "sgd_run.cpp": "-O1",
                                                        "runner_main.cpp": "-O1"}
    assert device_levels(tmp_path / "default") == []
    monkeypatch.setenv("PARAFUSE_OPTIMIZE", "-O2")
    assert set(ccn_levels(tmp_path / "set", "cuda").values()) == {"-O2"}
    assert device_levels(tmp_path / "set") == []


def test_low_levels_reach_the_cuda_device_code(tmp_path, monkeypatch) -> None:
    """nvcc's -O is the host code's: at -O0 and -O1 the device code's optimisers (cicc,
    ptxas) are told the level too, and otherwise keep their own -O3."""
    require_nvcc()
    monkeypatch.setenv("PARAFUSE_OPTIMIZE", "-O1")
    assert set(ccn_levels(tmp_path, "cuda").values()) == {"-O1"}
    assert device_levels(tmp_path) == ["-Xcicc=-O1", "-Xptxas=-O1"]


def device_levels(project: Path) -> list[str]:
    """The device-code optimisation flags on the configured CUDA project's .cu unit."""
    [unit] = [line for line in build_commands(project) if re.search(r" -c \S+\.cu( |$)", line)]
    return re.findall(r"-X(?:cicc|ptxas)=-O\w", unit)


@pytest.mark.parametrize("command", [
    ["boostfsm", "run", "samples/div7.fsm", "samples/div7.fsm"],
    ["coconetc", "run", "samples/sgd.ccn", "--backend", "cpu", "-n", "1", "--random",
     "--size", "N=8"],
])
def test_a_level_that_is_not_one_is_one_line(command, tmp_path) -> None:
    done = subprocess.run([str(BIN / command[0]), *command[1:]], cwd=REPO, text=True,
                          capture_output=True,
                          env={**os.environ, "PARAFUSE_OPTIMIZE": "-O3 -g",
                               "PARAFUSE_CACHE": str(tmp_path / "cache")})
    assert done.returncode == 1, done.stderr
    assert done.stderr == (f"{command[0]}: error: PARAFUSE_OPTIMIZE='-O3 -g' is not an "
                           "optimisation level (one of -O0, -O1, -O2, -O3, -Os, -Og, or "
                           "empty)\n"), done.stderr
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").glob("*/build"))
