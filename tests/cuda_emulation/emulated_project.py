"""The CUDA backend's generated project built for the emulated device: `src/P.cu` compiled
as C++ with PF_CUDA_EMULATION against this folder's cuda_runtime.h, nccl.h and
cublas_v2.h (and linked with MPI), the runner unchanged. What it checks and what it cannot
is in tests/cuda_emulation/README.md."""

from __future__ import annotations

from pathlib import Path

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.frontend import CheckedModule
from parafuse.emitters.ccn.cuda.project import project_files
from parafuse.emitters.names import cpp_name
from parafuse.emitters.toolchain.cmake import Toolchain, build, cached_build, write_tree

HERE = Path(__file__).resolve().parent
HEADERS = ["pf_emulated_device.hpp", "pf_emulated_kernels.hpp", "cuda_runtime.h", "cuda_fp16.h",
           "cuda_bf16.h", "nccl.h", "cublas_v2.h"]

CMAKE = """\
cmake_minimum_required(VERSION 3.18)
project({name} LANGUAGES C CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
find_package(MPI REQUIRED COMPONENTS CXX)
add_library({target} src/{name}_emulated.cpp)
target_include_directories({target} PUBLIC include PRIVATE emulation)
target_compile_definitions({target} PRIVATE PF_CUDA_EMULATION)
target_compile_options({target} PRIVATE -O1 -ffp-contract=off -Wno-unknown-pragmas)
target_link_libraries({target} PUBLIC MPI::MPI_CXX)
add_executable({name}_run src/{name}_run.cpp)
target_link_libraries({name}_run PRIVATE {target})
target_compile_definitions({name}_run PRIVATE PF_BACKEND_NAME="cuda")
set_target_properties({name}_run PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}})
"""


BOUND_CHECK = """\
add_executable({name}_bound_check src/{name}_bound_check.cpp)
target_include_directories({name}_bound_check PRIVATE emulation)
target_link_libraries({name}_bound_check PRIVATE {target})
set_target_properties({name}_bound_check PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}})
"""


def emulated_files(module: CheckedModule, program: str, schedules: list[str],
                   variants: dict[str, ir.Program] | None = None,
                   default_schedule: str | None = None,
                   bound_check: dict[str, int] | None = None) -> dict[str, str | bytes]:
    """The project's files; `bound_check` (sizes) adds P_bound_check (bound_check.cpp.in)."""
    files = project_files(module, program, schedules, f"emulated {program}", "90",
                          variants=variants, default_schedule=default_schedule)
    target = cpp_name(program)  # the library's CMake target and C++ namespace
    files["CMakeLists.txt"] = CMAKE.format(name=program, target=target)
    if bound_check is not None:
        files["CMakeLists.txt"] += BOUND_CHECK.format(name=program, target=target)
        sizes = " ".join(f"sizes.{cpp_name(n)} = {v};" for n, v in bound_check.items())
        source = (HERE / "bound_check.cpp.in").read_text()
        files[f"src/{program}_bound_check.cpp"] = source.replace("@FILE@", program).replace(
            "@NAME@", target).replace("@SIZES@", sizes)
    files[f"src/{program}_emulated.cpp"] = f'#include "{program}.cu"\n'
    for header in HEADERS:
        files[f"emulation/{header}"] = (HERE / header).read_bytes()
    return files


def build_emulated(module: CheckedModule, program: str, schedules: list[str],
                   variants: dict[str, ir.Program] | None = None,
                   bound_check: dict[str, int] | None = None) -> Path:
    """The built project (cached by content), runnable with run_ranks like any other."""
    files = emulated_files(module, program, schedules, variants, bound_check=bound_check)
    return cached_build(f"{program}-cuda-emulated", files, Toolchain.current().cmake_args(mpi=True))


def tuning_builder(module: CheckedModule, program: str, schedules: list[str], command: str,
                   out_dir: Path | None = None, variants: dict[str, ir.Program] | None = None,
                   default_schedule: str | None = None) -> Path:
    """The emulated project as the autotuner builds projects (see emitters/autotune.py)."""
    del command
    if out_dir is None:
        files = emulated_files(module, program, schedules, variants, default_schedule)
        return cached_build(f"{program}-cuda-emulated", files,
                            Toolchain.current().cmake_args(mpi=True))
    write_tree(out_dir, emulated_files(module, program, schedules, variants, default_schedule))
    build(out_dir, out_dir / "build", Toolchain.current().cmake_args(mpi=True))
    return out_dir
