"""The FSM runtime's GPU half (cpp_runtime/fsm/cuda/) built as the drivers the tests use, on
the emulated device (compiled as C++ against cpp_runtime/ccn/cuda_emulated/, no CUDA
toolkit) or, for a real GPU, compiled by nvcc:

    fsm_cuda_table_driver BLOB INPUT [--matches] SCHEME:THREADS:CHUNKS ...   (machines)
    fsm_cuda_token_driver MANIFEST [--on-device] SCHEME:THREADS:CHUNKS ...   (token sets)
    fsm_cuda_engine_set_driver BLOB TAGS INPUT [--matches] [--on-device] ...  (engine sets)

    cuda_table_driver(emulated=True) -> the machine driver's path, built once per content
    cuda_token_driver(emulated=True) -> the token-set driver's path, likewise
    cuda_engine_set_driver(emulated=True) -> the engine-set driver's path, likewise
    cuda_driver_files(emulated) -> {path: content}: one project of every driver
"""

from __future__ import annotations

from pathlib import Path

from parafuse.emitters.jinja_env import render
from parafuse.emitters.toolchain.cmake import cached_build
from parafuse.emitters.toolchain.runtime import runtime_files

from .cuda_project import GPU_HEADERS, cmake_arguments, emulated_device_files
from .project import RUNTIME_HEADERS

DRIVER_SOURCES = {"fsm_cuda_table_driver": "table_driver.cu",
                  "fsm_cuda_token_driver": "token_driver.cu",
                  "fsm_cuda_engine_set_driver": "engine_set_driver.cu"}


def cuda_driver_files(emulated: bool) -> dict[str, str | bytes]:
    """Every driver in one project; for the emulated device, src/<driver>_emulated.cpp
    includes each driver's source."""
    cmake = render("fsm_cuda/drivers_CMakeLists.txt.j2", emulated=emulated,
                   drivers=DRIVER_SOURCES)
    sources = [f"fsm/cuda/{source}" for source in DRIVER_SOURCES.values()]
    files: dict[str, str | bytes] = {
        "CMakeLists.txt": cmake, **runtime_files(RUNTIME_HEADERS + GPU_HEADERS + sources)}
    if emulated:
        for driver, source in DRIVER_SOURCES.items():
            files[f"src/{driver}_emulated.cpp"] = f'#include "fsm/cuda/{source}"\n'
        files.update(emulated_device_files())
    return files


def _cuda_driver(driver: str, emulated: bool, nvcc: str | None) -> Path:
    name = "fsm-cuda-drivers" + ("-emulated" if emulated else "")
    return cached_build(name, cuda_driver_files(emulated),
                        cmake_arguments(emulated, nvcc)) / "build" / driver


def cuda_table_driver(emulated: bool = True, nvcc: str | None = None) -> Path:
    """The machine driver, built once per content: for the emulated device, or by `nvcc`."""
    return _cuda_driver("fsm_cuda_table_driver", emulated, nvcc)


def cuda_token_driver(emulated: bool = True, nvcc: str | None = None) -> Path:
    """The token-set driver, built once per content: for the emulated device, or by `nvcc`."""
    return _cuda_driver("fsm_cuda_token_driver", emulated, nvcc)


def cuda_engine_set_driver(emulated: bool = True, nvcc: str | None = None) -> Path:
    """The engine-set driver, built once per content: for the emulated device, or by `nvcc`."""
    return _cuda_driver("fsm_cuda_engine_set_driver", emulated, nvcc)
