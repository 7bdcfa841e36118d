"""`boostfsm run|compile --backend cuda|cuda-emulated` (the backends' records:
cli/fsm_kinds.py): a DFA's or a token set's GPU project (emitters/fsm/cuda_project.py,
cuda_token_project.py), built by nvcc for a GPU or, `emulated`, as C++ for the emulated
device."""

from __future__ import annotations

from pathlib import Path

from parafuse.cli.errors import UsageError
from parafuse.emitters.fsm.cuda_project import (
    GPU_SCHEMES,
    cached_cuda_runner,
    cmake_arguments,
    cuda_project_files,
    gpu_refusal,
)
from parafuse.emitters.fsm.cuda_token_project import (
    GPU_TOKEN_SCHEMES,
    cached_cuda_token_runner,
    cuda_token_project_files,
)
from parafuse.emitters.fsm.project import ProjectRequest
from parafuse.emitters.toolchain.cmake import build_tree, write_tree
from parafuse.emitters.toolchain.nvidia import find_nvcc, gpu_present
from parafuse.fsm_compiler.pipeline import analyse_for_project
from parafuse.grammar.diagnostics import CompileError


def check_gpu_kind(machine: object) -> None:
    """A machine the GPU does not run yet is refused at its definition in the file."""
    refusal = gpu_refusal(machine)
    if refusal:
        raise CompileError(refusal, machine.location,
                           hint="--backend cpp runs it on the CPU's cores")


def _nvcc(why: str) -> str:
    nvcc = find_nvcc()
    if nvcc is None:
        raise UsageError(f"no nvcc (CUDA 13) on this machine to {why}")
    return str(nvcc)


def _runner_nvcc(emulated: bool, scheme: str | None, schemes: tuple[str, ...]) -> str | None:
    """A scheme the GPU does not run is refused before a build, as is --backend cuda without
    a GPU; nvcc for a GPU's build."""
    if scheme is not None and scheme not in schemes:
        raise UsageError(f"--scheme {scheme} does not run on the GPU (its schemes: "
                         f"{', '.join(schemes)})")
    if emulated:
        return None
    if not gpu_present():
        raise UsageError("--backend cuda needs an NVIDIA GPU; --backend cuda-emulated runs "
                         "the same code on the emulated device")
    return _nvcc("build the CUDA runner")


def gpu_runner(machine, file: str, emulated: bool, scheme: str | None) -> Path:
    """The runner of a DFA's GPU project, built into the cache when new."""
    check_gpu_kind(machine)
    nvcc = _runner_nvcc(emulated, scheme, GPU_SCHEMES)
    request = ProjectRequest(machine, file, analyse_for_project(machine, None))
    return cached_cuda_runner(request, emulated, nvcc)


def gpu_token_runner(token_set, file: str, emulated: bool, scheme: str | None) -> Path:
    """The runner of a token set's GPU project, built into the cache when new."""
    nvcc = _runner_nvcc(emulated, scheme, GPU_TOKEN_SCHEMES)
    return cached_cuda_token_runner(token_set, file, emulated, nvcc)


def _build_gpu_project(files: dict[str, str | bytes], folder: Path, python: bool,
                       no_build: bool, emulated: bool) -> None:
    if no_build:
        write_tree(folder, files)
        return
    nvcc = None if emulated else _nvcc("build the CUDA project (--no-build writes it only)")
    build_tree(files, folder, cmake_arguments(emulated, nvcc, python))


def compile_gpu_project(machine, file: str, folder: Path, python: bool, sample: bytes | None,
                        no_build: bool, emulated: bool) -> None:
    check_gpu_kind(machine)
    request = ProjectRequest(machine, file, analyse_for_project(machine, sample), python)
    _build_gpu_project(cuda_project_files(request, emulated), folder, python, no_build, emulated)


def compile_gpu_token_project(token_set, file: str, folder: Path, python: bool,
                              no_build: bool, emulated: bool) -> None:
    files = cuda_token_project_files(token_set, file, emulated, python)
    _build_gpu_project(files, folder, python, no_build, emulated)


