"""The CUDA backend's project built for the emulated device (`coconetc run|build --backend
cuda-emulated`): `src/P.cu` compiled as C++ with PF_CUDA_EMULATION against the headers of
cpp_runtime/ccn/cuda_emulated/ (the CUDA runtime, NCCL over MPI, cuBLAS) instead of CUDA's,
linked with MPI; the runner as generated. No CUDA toolkit is needed: the system's C++
compiler and the wheel's MPI. What the device checks and what it cannot is in
cpp_runtime/ccn/cuda_emulated/README.md."""

from __future__ import annotations

from pathlib import Path

from parafuse.ccn_compiler.frontend import CheckedModule
from parafuse.emitters.ccn.chunk_policy import ChunkVariant
from parafuse.emitters.names import cpp_name
from parafuse.emitters.toolchain.cmake import Toolchain, build_tree, cached_build
from parafuse.emitters.toolchain.runtime import runtime_folders

from .project import project_files

BACKEND = "cuda-emulated"
EMULATION = "include/ccn/cuda_emulated"  # first on the library's include path

CMAKE = """\
cmake_minimum_required(VERSION 3.18)
project({name} LANGUAGES C CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
find_package(MPI REQUIRED COMPONENTS CXX)
add_library({target} src/{name}_emulated.cpp)
target_include_directories({target} BEFORE PRIVATE {emulation})
target_include_directories({target} PUBLIC include)
target_compile_definitions({target} PRIVATE PF_CUDA_EMULATION)
target_compile_options({target} PRIVATE -O1 -ffp-contract=off -Wno-unknown-pragmas)
target_link_libraries({target} PUBLIC MPI::MPI_CXX)
add_executable({name}_run src/{name}_run.cpp src/ccn/sources/runner_main.cpp)
target_link_libraries({name}_run PRIVATE {target})
target_compile_definitions({name}_run PRIVATE PF_BACKEND_NAME="{backend}")
target_compile_options({name}_run PRIVATE -O1 -ffp-contract=off)
set_target_properties({name}_run PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}})
"""

# The Python module on the emulated device: its results are emulated device memory, which
# no framework can read, so only host tensors (numpy) go in and out; tests check its copies.
PYTHON_CMAKE = """\
set_target_properties({target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
find_package(Python REQUIRED COMPONENTS Interpreter Development.Module)
find_package(pybind11 CONFIG REQUIRED)
set(CMAKE_INTERPROCEDURAL_OPTIMIZATION OFF)
pybind11_add_module({name}_py src/{name}_python.cpp)
target_compile_options({name}_py PRIVATE -O1 -ffp-contract=off)
target_include_directories({name}_py BEFORE PRIVATE {emulation})
target_compile_definitions({name}_py PRIVATE PF_CUDA_EMULATION)
set_target_properties({name}_py PROPERTIES OUTPUT_NAME {name}
  LIBRARY_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}})
target_link_libraries({name}_py PRIVATE {target})
"""


def emulated_files(module: CheckedModule, program: str, schedules: list[str], command: str,
                   variants: tuple[ChunkVariant, ...] = (),
                   default_schedule: str | None = None,
                   python: bool = False) -> dict[str, str | bytes]:
    """The CUDA project's files with the emulated device's CMakeLists and headers (`python`:
    and the Python module, for host tensors only)."""
    files = project_files(module, program, schedules, command, "90", python=python,
                          variants=variants, default_schedule=default_schedule)
    files["CMakeLists.txt"] = CMAKE.format(name=program, target=cpp_name(program),
                                           emulation=EMULATION, backend=BACKEND)
    if python:
        files["CMakeLists.txt"] += PYTHON_CMAKE.format(name=program, target=cpp_name(program),
                                                       emulation=EMULATION)
    files[f"src/{program}_emulated.cpp"] = f'#include "{program}.cu"\n'
    files.update(runtime_folders(["ccn/cuda_emulated"], under="include"))
    return files


def cmake_arguments(python: bool = False) -> list[str]:
    return Toolchain.current().cmake_args(mpi=True, python=python)


def build_emulated_project(module: CheckedModule, program: str, schedules: list[str],
                           command: str, out_dir: Path | None = None,
                           variants: tuple[ChunkVariant, ...] = (),
                           default_schedule: str | None = None) -> Path:
    """The built project: into `out_dir`, or the cache (keyed by content) without one."""
    files = emulated_files(module, program, schedules, command, variants, default_schedule)
    if out_dir is None:
        return cached_build(f"{program}-{BACKEND}", files, cmake_arguments())
    build_tree(files, out_dir, cmake_arguments())
    return out_dir
