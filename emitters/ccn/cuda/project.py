"""`coconetc build --backend cuda`: render the CUDA+NCCL CMake project of one program with
all of its chosen schedules, and build it with nvcc where one is found."""

from __future__ import annotations

from pathlib import Path

from parafuse.ccn_compiler.frontend import CheckedModule
from parafuse.emitters.ccn.chunk_policy import ChunkDefaults, ChunkPolicy, ChunkRule, ChunkVariant
from parafuse.emitters.ccn.epilogues import EpilogueKind
from parafuse.emitters.ccn.plan import LoweringPlan
from parafuse.emitters.ccn.project_context import scheduled_plans, template_context
from parafuse.emitters.jinja_env import render
from parafuse.emitters.toolchain.cmake import Toolchain, build_tree, cached_build, write_tree
from parafuse.emitters.toolchain.nvidia import (
    cublas_library,
    cublaslt_library,
    find_nvcc,
    nccl_library,
)
from parafuse.emitters.toolchain.runtime import runtime_folders

from .program import lower_schedule

DEFAULT_CUDA_ARCH = "90;80"
# What the CUDA backend does with a chunk count `tune` leaves open.
CUDA_CHUNKS = ChunkDefaults(
    fused=ChunkPolicy(ChunkRule.BY_SIZE, "sized at run time from the bytes per rank "
                      "(pf::auto_chunks)"),
    overlap=ChunkPolicy(ChunkRule.FIXED, "four chunks, the producer's and the consumer's on "
                        "two streams", 4))
# The element-wise stages the CUDA backend's GEMM (cuBLASLt) applies in its epilogue.
CUDA_EPILOGUES = frozenset(EpilogueKind)


def project_files(module: CheckedModule, program_name: str, schedules: list[str],
                  command: str, cuda_arch: str = DEFAULT_CUDA_ARCH,
                  python: bool = False, variants: tuple[ChunkVariant, ...] = (),
                  default_schedule: str | None = None) -> dict[str, str | bytes]:
    """Every file of the generated CUDA project, by path. `variants` and
    `default_schedule` mean what they mean for the CPU backend's project_files."""
    plans = scheduled_plans(module, program_name, schedules, CUDA_CHUNKS, variants,
                            CUDA_EPILOGUES, attention=True)
    return print_project(module, program_name, plans, command, cuda_arch, python,
                         default_schedule)


def print_project(module: CheckedModule, program_name: str, plans: list[LoweringPlan],
                  command: str, cuda_arch: str = DEFAULT_CUDA_ARCH, python: bool = False,
                  default_schedule: str | None = None) -> dict[str, str | bytes]:
    """Every file of the CUDA project of `plans` (one schedule class each), by path."""
    context = template_context(module, program_name, [p.schedule for p in plans], command,
                               python, default_schedule)
    context.update(schedules=[lower_schedule(plan) for plan in plans], cuda_arch=cuda_arch,
                   nccl=nccl_library(), cublas=cublas_library(),
                   cublaslt=cublaslt_library())
    files: dict[str, str | bytes] = {
        "CMakeLists.txt": render("ccn_cuda/CMakeLists.txt.j2", **context),
        f"include/{program_name}.hpp": render("ccn_cuda/header.hpp.j2", **context),
        f"src/{program_name}.cu": render("ccn_cuda/library.cu.j2", **context),
        f"src/{program_name}_run.cpp": render("ccn/runner.cpp.j2", **context),
    }
    if python:
        files[f"src/{program_name}_python.cpp"] = render("ccn_cuda/python.cpp.j2", **context)
    # ccn/cpu too: the host code of the project (runner, Python module) uses its half.hpp
    files.update(runtime_folders(["common", "ccn", "ccn/cpu", "ccn/cuda"], under="include"))
    files.update(runtime_folders(["ccn/sources"], under="src"))
    return files


def cmake_arguments(nvcc: str, python: bool = False) -> list[str]:
    return Toolchain.current().cmake_args(mpi=True, python=python) + \
        [f"-DCMAKE_CUDA_COMPILER={nvcc}"]


def build_cuda_project(module: CheckedModule, program_name: str, schedules: list[str],
                       command: str, out_dir: Path | None = None,
                       cuda_arch: str = DEFAULT_CUDA_ARCH, python: bool = False,
                       variants: tuple[ChunkVariant, ...] = (),
                       default_schedule: str | None = None) -> tuple[Path, bool]:
    """(the project folder, whether it was built): without nvcc only the sources are written."""
    files = project_files(module, program_name, schedules, command, cuda_arch, python,
                          variants, default_schedule)
    nvcc = find_nvcc()
    if nvcc is None:
        target = out_dir or Path(f"{program_name}-cuda")
        write_tree(target, files)
        return target, False
    args = cmake_arguments(nvcc, python)
    if out_dir is None:
        return cached_build(f"{program_name}-cuda", files, args), True
    build_tree(files, out_dir, args)
    return out_dir, True


def tuning_builder(cuda_arch: str):
    """build_cuda_project as the autotuner calls a builder: the candidates for the GPU
    present (`native`), the final project for `cuda_arch`; nvcc is required."""
    def build_for_tuning(module: CheckedModule, program_name: str, schedules: list[str],
                         command: str, out_dir: Path | None = None,
                         variants: tuple[ChunkVariant, ...] = (),
                         default_schedule: str | None = None) -> Path:
        arch = "native" if out_dir is None else cuda_arch
        folder, _ = build_cuda_project(module, program_name, schedules, command, out_dir, arch,
                                       variants=variants, default_schedule=default_schedule)
        return folder
    return build_for_tuning
