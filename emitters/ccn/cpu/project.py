"""`coconetc build --backend cpu`: render the CMake project of one program with all of its
chosen schedules, and build it (into `-o DIR`, or into the content-keyed cache)."""

from __future__ import annotations

from pathlib import Path

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.frontend import CheckedModule
from parafuse.emitters.ccn.chunk_policy import ChunkDefaults, ChunkPolicy, ChunkRule, ChunkVariant
from parafuse.emitters.ccn.epilogues import EpilogueKind
from parafuse.emitters.ccn.plan import LoweringPlan
from parafuse.emitters.ccn.project_context import scheduled_plans, template_context
from parafuse.emitters.jinja_env import render
from parafuse.emitters.toolchain.cmake import (
    Toolchain,
    build_tree,
    cached_build,
)
from parafuse.emitters.toolchain.onednn import dnnl_cmake_dir
from parafuse.emitters.toolchain.runtime import runtime_folders

from .program import lower_schedule

# What the CPU backend does with a chunk count `tune` leaves open.
CPU_CHUNKS = ChunkDefaults(
    fused=ChunkPolicy(ChunkRule.BY_SIZE, "sized at run time from the bytes per rank and "
                      "the room in the node-shared segment (pf::fused_auto_chunks)"),
    overlap=ChunkPolicy(ChunkRule.MEASURED, "1, 2 and 4 chunks timed over the first steps, "
                        "the fastest kept (pf::OverlapChunks)"))
# The element-wise stages the CPU backend's GEMM (oneDNN's post-ops) applies in its epilogue.
CPU_EPILOGUES = frozenset(EpilogueKind)


def project_files(module: CheckedModule, program_name: str, schedules: list[str],
                  command: str, python: bool = False,
                  variants: tuple[ChunkVariant, ...] = (),
                  default_schedule: str | None = None) -> dict[str, str | bytes]:
    """Every file of the generated project, by path: the plans of `schedules`, printed.
    `variants` adds scheduled programs under names of their own (the autotuner's chunk
    counts); `default_schedule` is the runner's choice without --schedule (else
    `default`, or the first schedule)."""
    plans = scheduled_plans(module, program_name, schedules, CPU_CHUNKS, variants,
                            CPU_EPILOGUES)
    return print_project(module, program_name, plans, command, python, default_schedule)


def print_project(module: CheckedModule, program_name: str, plans: list[LoweringPlan],
                  command: str, python: bool = False,
                  default_schedule: str | None = None) -> dict[str, str | bytes]:
    """Every file of the project of `plans` (one schedule class each), by path."""
    context = template_context(module, program_name, [p.schedule for p in plans], command,
                               python, default_schedule)
    context["schedules"] = [lower_schedule(plan) for plan in plans]
    context["dnnl_dir"] = dnnl_cmake_dir()
    context["uses_matmul"] = uses_matmul(plans)
    files: dict[str, str | bytes] = {
        "CMakeLists.txt": render("ccn_cpu/CMakeLists.txt.j2", **context),
        f"cmake/{program_name}Config.cmake.in": render(
            "common/Config.cmake.in.j2", **context, cxx_name=program_name,
            config_dependencies=["MPI COMPONENTS CXX", "OpenMP COMPONENTS CXX",
                                 f'dnnl CONFIG HINTS "{context["dnnl_dir"]}"'],
            check_components=False),
        f"include/{program_name}.hpp": render("ccn_cpu/header.hpp.j2", **context),
        f"src/{program_name}.cpp": render("ccn_cpu/library.cpp.j2", **context),
        f"src/{program_name}_run.cpp": render("ccn/runner.cpp.j2", **context),
    }
    if python:
        files[f"src/{program_name}_python.cpp"] = render("ccn_cpu/python.cpp.j2", **context)
    files.update(runtime_folders(["common", "ccn", "ccn/cpu"], under="include"))
    files.update(runtime_folders(["ccn/sources"], under="src"))
    return files


def uses_matmul(plans: list[LoweringPlan]) -> bool:
    """Whether a schedule calls `pf::matmul`: only then does the library include
    ccn/cpu/matmul.hpp, whose oneDNN header alone takes 1.5 s of each compile to parse."""
    return any(isinstance(stage, ir.MatmulStage)
               for plan in plans for stage in plan.program.flat_stages())


def cmake_arguments(sanitize: bool = False, python: bool = False) -> list[str]:
    args = Toolchain.current().cmake_args(mpi=True, python=python, sanitized=sanitize)
    return args + (["-DPARAFUSE_SANITIZE=ON"] if sanitize else [])


def build_cpu_project(module: CheckedModule, program_name: str, schedules: list[str],
                      command: str, out_dir: Path | None = None, python: bool = False,
                      sanitize: bool = False, variants: tuple[ChunkVariant, ...] = (),
                      default_schedule: str | None = None) -> Path:
    """The folder of the built project (`DIR/build/P_run` is its runner)."""
    files = project_files(module, program_name, schedules, command, python, variants,
                          default_schedule)
    args = cmake_arguments(sanitize, python)
    if out_dir is None:
        return cached_build(program_name, files, args)
    build_tree(files, out_dir, args)
    return out_dir
