"""Every generated project, made with its Python module (`--python`), can be included in a
user's CMake project with add_subdirectory() on a machine without pybind11: inside another
project the module is off unless the user sets <C>_PYTHON=ON. A machine's project, made by
`boostfsm compile --python`, is built that way, then configured with its module turned on;
the compile says on stderr what it compiles, and prints on stdout only what it wrote."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from parafuse.ccn_compiler.frontend import check_source
from parafuse.emitters.ccn.cpu import project as ccn_cpu
from parafuse.emitters.ccn.cuda import project as ccn_cuda
from parafuse.emitters.fsm.project import ProjectRequest, cmake_arguments, project_files
from parafuse.emitters.fsm.token_project import TokenHints, token_project_files
from parafuse.emitters.toolchain.cmake import Toolchain, build, write_tree
from parafuse.emitters.toolchain.nvidia import find_nvcc
from parafuse.fsm_compiler.pipeline import analyse_for_project, compile_file
from parafuse.grammar.diagnostics import SourceFile
from tests.conftest import REPO, SAMPLES
from tests.required_tools import require_cxx, require_nvcc

BOOSTFSM = str(Path(sys.executable).parent / "boostfsm")
WITHOUT_PYBIND11 = ["-DCMAKE_DISABLE_FIND_PACKAGE_pybind11=ON"]
BUILD_NOTICE = re.compile(r"boostfsm: compiling \S+ \(C\+\+ with CMake and Ninja\) \.\.\. "
                          r"done in \d+\.\d s\n")


def fsm_machine(relative: str):
    path = SAMPLES / relative
    source = SourceFile(f"samples/{relative}", path.read_text(encoding="latin-1"))
    return compile_file(source).machines[0]


def machine_project() -> tuple[dict, str]:
    machine = fsm_machine("div7.fsm")
    request = ProjectRequest(machine, "samples/div7.fsm", analyse_for_project(machine, None),
                             python=True)
    return project_files(request), "div7"


def token_set_project() -> tuple[dict, str]:
    token_set = fsm_machine("tokens/json_tokens.fsm")
    return token_project_files(token_set, "samples/tokens/json_tokens.fsm", TokenHints(),
                               python=True), "json_tokens"


def ccn_module():
    return check_source((SAMPLES / "sgd.ccn").read_text(), "samples/sgd.ccn")


def ccn_cpu_project() -> tuple[dict, str]:
    return ccn_cpu.project_files(ccn_module(), "sgd", ["default"], "test", python=True), "sgd"


def ccn_cuda_project() -> tuple[dict, str]:
    require_nvcc()
    return ccn_cuda.project_files(ccn_module(), "sgd", ["default"], "test", "90",
                                  python=True), "sgd"


def user_project(folder: Path, generated: Path, body: str = "") -> Path:
    folder.mkdir()
    (folder / "CMakeLists.txt").write_text(
        f"cmake_minimum_required(VERSION 3.18)\nproject(user LANGUAGES C CXX)\n"
        f"add_subdirectory({generated} generated)\n{body}")
    return folder


@pytest.mark.parametrize("make", [machine_project, token_set_project, ccn_cpu_project,
                                  ccn_cuda_project],
                         ids=["fsm-machine", "fsm-token-set", "ccn-cpu", "ccn-cuda"])
def test_a_python_project_configures_inside_another_without_pybind11(make, tmp_path) -> None:
    require_cxx()
    files, name = make()
    write_tree(tmp_path / "generated", files)
    user = user_project(tmp_path / "user", tmp_path / "generated")
    args = Toolchain.current().cmake_args(mpi=True) + WITHOUT_PYBIND11
    if make is ccn_cuda_project:
        args.append(f"-DCMAKE_CUDA_COMPILER={find_nvcc()}")
    done = subprocess.run([Toolchain.current().tool("cmake"), "-S", str(user), "-B",
                           str(tmp_path / "build"), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"{name}_PYTHON:BOOL=OFF" in (tmp_path / "build" / "CMakeCache.txt").read_text()


APP = """#include <cstdio>
#include "div7.hpp"
int main() {
  const char* bits = "1110";
  div7::Result r = div7::run(reinterpret_cast<const uint8_t*>(bits), 4);
  std::printf("%s %llu\\n", div7::state_name(r.final_state), (unsigned long long)r.counts[0]);
}
"""


@pytest.mark.slow
def test_boostfsm_compile_python_then_add_subdirectory(tmp_path) -> None:
    require_cxx()
    out = tmp_path / "div7"
    done = subprocess.run([BOOSTFSM, "compile", "samples/div7.fsm", "--python", "-o", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"wrote {out} (machine div7); built {out}/build/div7_run\n"
    assert BUILD_NOTICE.fullmatch(done.stderr), done.stderr
    assert list((out / "build").glob("div7.*.so")), "the project alone builds its module"

    user = user_project(tmp_path / "user", out, "add_executable(app app.cpp)\n"
                        "target_link_libraries(app PRIVATE div7::div7)\n")
    (user / "app.cpp").write_text(APP)
    build_dir = tmp_path / "build"
    build(user, build_dir, Toolchain.current().cmake_args(mpi=False) + WITHOUT_PYBIND11)
    app = subprocess.run([str(build_dir / "app")], capture_output=True, text=True)
    assert app.stdout == "r0 2\n", app.stdout + app.stderr  # 7 and 14 are divisible
    assert not list(build_dir.rglob("div7.*.so"))

    turned_on = subprocess.run(  # configured only: the module compiled above already
        [Toolchain.current().tool("cmake"), "-S", str(user), "-B", str(build_dir),
         *cmake_arguments(python=True, mpi=False), "-Ddiv7_PYTHON=ON",
         "-DCMAKE_DISABLE_FIND_PACKAGE_pybind11=OFF"], capture_output=True, text=True)
    assert turned_on.returncode == 0, turned_on.stderr
    assert "div7_python" in (build_dir / "build.ninja").read_text()
