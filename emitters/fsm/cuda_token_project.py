"""Emit and build the GPU project of one token set: the CPU token project's templates
(templates/fsm_tokens/, rendered with `gpu`) and the GPU project's CMakeLists
(templates/fsm_cuda/), over the runtime of cpp_runtime/fsm/cuda/token_run.cuh.

    cuda_token_project_files(token_set, source_name, emulated) -> {path: content}:
        CMakeLists.txt (M::M, and a package for find_package(M CONFIG) after `cmake
        --install`), cmake/MConfig.cmake.in, include/M.hpp (the CPU library's API, plus
        run_device), src/M.cu, src/M_tables.cpp + src/M.tables.bin, src/M_run.cpp (the CPU
        runner's options and JSON), src/M_python.cpp (host buffers or DLPack tensors in,
        numpy out), runtime/
    cached_cuda_token_runner(token_set, source_name, emulated) -> the runner of a build in
        the content-keyed cache
"""

from __future__ import annotations

from pathlib import Path

from parafuse.emitters.jinja_env import render
from parafuse.emitters.toolchain.cmake import cached_build
from parafuse.emitters.toolchain.runtime import runtime_files
from parafuse.fsm_compiler.tokens.token_sets import CompiledTokenSet

from .cuda_project import (
    DEFAULT_CUDA_ARCH,
    GPU_HEADERS,
    cmake_arguments,
    emulated_unit,
    gpu_context,
    package_files,
)
from .project import RUNTIME_HEADERS
from .token_blob import TokenHints, token_blob
from .token_project import token_context

GPU_TOKEN_SCHEMES = ("auto", "seq", "spec")


def cuda_token_project_files(token_set: CompiledTokenSet, source_name: str, emulated: bool,
                             python: bool = False,
                             cuda_arch: str = DEFAULT_CUDA_ARCH) -> dict[str, str | bytes]:
    name = token_set.name
    blob = token_blob(token_set, TokenHints())  # the GPU's auto measures nothing yet
    context = token_context(token_set, source_name, blob, python)
    if context["default_scheme"] not in GPU_TOKEN_SCHEMES:  # a CPU scheme the file asks for
        context["default_scheme"] = "auto"
    context.update(gpu_context(source_name, name, emulated, cuda_arch))
    files: dict[str, str | bytes] = {
        "CMakeLists.txt": render("fsm_cuda/CMakeLists.txt.j2", **context),
        f"include/{name}.hpp": render("fsm_tokens/tokens.hpp.j2", **context),
        f"src/{name}.cu": render("fsm_tokens/tokens.cpp.j2", **context),
        f"src/{name}_tables.cpp": render("fsm/tables.cpp.j2", **context),
        f"src/{name}.tables.bin": blob,
        f"src/{name}_run.cpp": render("fsm_tokens/tokens_run.cpp.j2", **context),
        f"src/{name}_python.cpp": render("fsm_tokens/tokens_python.cpp.j2", **context),
        **runtime_files(RUNTIME_HEADERS + GPU_HEADERS),
    }
    return files | package_files(context) | emulated_unit(name, emulated)


def cached_cuda_token_runner(token_set: CompiledTokenSet, source_name: str, emulated: bool,
                             nvcc: str | None = None) -> Path:
    """The runner of the token set's GPU project, built into the cache once per content."""
    name = token_set.name
    files = cuda_token_project_files(token_set, source_name, emulated)
    kind = "cuda-emulated" if emulated else "cuda"
    project = cached_build(f"fsm-tokens-{kind}-{name}", files, cmake_arguments(emulated, nvcc))
    return project / "build" / f"{name}_run"
