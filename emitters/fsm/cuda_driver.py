"""The FSM runtime's GPU half (cpp_runtime/fsm/cuda/) built as the table-driven driver the
tests use: `fsm_cuda_table_driver BLOB INPUT [--matches] SCHEME:THREADS:CHUNKS ...`, on the
emulated device (compiled as C++ against cpp_runtime/ccn/cuda_emulated/, no CUDA toolkit)
or, for a real GPU, compiled by nvcc.

    cuda_table_driver(emulated=True) -> the driver's path, built once per content
    cuda_driver_files(emulated)      -> {path: content}: CMakeLists.txt, the runtime tree
"""

from __future__ import annotations

from pathlib import Path

from parafuse.emitters.toolchain.cmake import cached_build
from parafuse.emitters.toolchain.runtime import runtime_files

from .cuda_project import GPU_HEADERS, cmake_arguments, emulated_device_files
from .project import RUNTIME_HEADERS

DRIVER = "fsm_cuda_table_driver"

EMULATED_CMAKE = f"""\
cmake_minimum_required(VERSION 3.18)
project({DRIVER} LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
find_package(Threads REQUIRED)
add_executable({DRIVER} src/table_driver_emulated.cpp)
target_include_directories({DRIVER} BEFORE PRIVATE runtime/ccn/cuda_emulated)
target_include_directories({DRIVER} PRIVATE runtime)
target_compile_definitions({DRIVER} PRIVATE PF_CUDA_EMULATION)
target_compile_options({DRIVER} PRIVATE -O1 -Wno-unknown-pragmas)
target_link_libraries({DRIVER} PRIVATE Threads::Threads)
"""

NVCC_CMAKE = f"""\
cmake_minimum_required(VERSION 3.18)
project({DRIVER} LANGUAGES CXX CUDA)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CUDA_STANDARD 17)
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 90)
endif()
add_executable({DRIVER} runtime/fsm/cuda/table_driver.cu)
target_include_directories({DRIVER} PRIVATE runtime)
target_compile_options({DRIVER} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-O3>)
"""


def cuda_driver_files(emulated: bool) -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {
        "CMakeLists.txt": EMULATED_CMAKE if emulated else NVCC_CMAKE,
        **runtime_files(RUNTIME_HEADERS + GPU_HEADERS + ["fsm/cuda/table_driver.cu"]),
    }
    if emulated:
        files["src/table_driver_emulated.cpp"] = '#include "fsm/cuda/table_driver.cu"\n'
        files.update(emulated_device_files())
    return files


def cuda_table_driver(emulated: bool = True, nvcc: str | None = None) -> Path:
    """The driver, built once per content: for the emulated device, or by `nvcc`."""
    name = "fsm-cuda-driver" + ("-emulated" if emulated else "")
    return cached_build(name, cuda_driver_files(emulated), cmake_arguments(emulated, nvcc)) / \
        "build" / DRIVER
