"""Emit and build the GPU project of one DFA (an explicit machine, or a pattern set
compiled to one DFA): templates under templates/fsm_cuda/ and the DFA parts shared with the
CPU project (templates/fsm/), over the runtime of cpp_runtime/fsm/cuda/.

    cuda_project_files(request, emulated, cuda_arch) -> {path: content}: CMakeLists.txt,
        include/M.hpp (the CPU library's API), src/M.cu, src/M_tables.cpp + src/M.tables.bin,
        src/M_run.cpp (the CPU runner's options and JSON), src/M_python.cpp (the CPU
        module's: host buffers in, numpy out), runtime/ (with `emulated`, also the emulated
        device's headers and src/M_emulated.cpp)
    cached_cuda_runner(request, emulated) -> the runner of a build in the content-keyed cache

Pattern sets of several engines and token sets have no GPU project yet (docs/fsm.md, "On
GPUs"); `gpu_refusal` says so for `boostfsm`.
"""

from __future__ import annotations

from pathlib import Path

from parafuse.emitters.jinja_env import render
from parafuse.emitters.toolchain.cmake import Toolchain, cached_build
from parafuse.emitters.toolchain.runtime import CPP_RUNTIME, runtime_files, runtime_folders
from parafuse.fsm_compiler.compiled import CompiledMachine

from .project import RUNTIME_HEADERS, ProjectRequest, machine_blob, template_context

GPU_SCHEMES = ("auto", "seq", "enum", "spec")
DEFAULT_CUDA_ARCH = "90;80"
GPU_HEADERS = sorted(path.relative_to(CPP_RUNTIME).as_posix()
                     for path in (CPP_RUNTIME / "fsm" / "cuda").glob("*.cuh"))


def gpu_refusal(machine: object) -> str | None:
    """Why `machine` has no GPU project, or None."""
    if isinstance(machine, CompiledMachine):
        return None
    what = "a token set" if type(machine).__name__ == "CompiledTokenSet" else \
        f"a pattern set of {len(machine.engines)} engines"
    return (f"'{machine.name}' is {what}: the GPU runs explicit machines and pattern sets "
            "compiled to one DFA so far (docs/fsm.md, 'On GPUs')")


def cuda_project_files(request: ProjectRequest, emulated: bool,
                       cuda_arch: str = DEFAULT_CUDA_ARCH) -> dict[str, str | bytes]:
    machine = request.machine
    assert isinstance(machine, CompiledMachine), gpu_refusal(machine)
    name = machine.name
    blob = machine_blob(machine, request.analysis)
    context = template_context(request, blob)
    if context["default_scheme"] not in GPU_SCHEMES:  # a CPU scheme the file asks for
        context["default_scheme"] = "auto"
    context.update(gpu=True, emulated=emulated, cuda_arch=cuda_arch)
    files: dict[str, str | bytes] = {
        "CMakeLists.txt": render("fsm_cuda/CMakeLists.txt.j2", **context),
        f"include/{name}.hpp": render("fsm/machine.hpp.j2", **context),
        f"src/{name}.cu": render("fsm_cuda/machine.cu.j2", **context),
        f"src/{name}_tables.cpp": render("fsm/tables.cpp.j2", **context),
        f"src/{name}.tables.bin": blob,
        f"src/{name}_run.cpp": render("fsm/runner.cpp.j2", **context),
        f"src/{name}_python.cpp": render("fsm/python.cpp.j2", **context),
        **runtime_files(RUNTIME_HEADERS + GPU_HEADERS),
    }
    if emulated:
        files[f"src/{name}_emulated.cpp"] = f'#include "{name}.cu"\n'
        files.update(emulated_device_files())
    return files


def emulated_device_files() -> dict[str, bytes]:
    """The emulated device's headers (cpp_runtime/ccn/cuda_emulated/) under runtime/: a
    project compiles its CUDA unit as C++ with PF_CUDA_EMULATION and `-I
    runtime/ccn/cuda_emulated` first."""
    return {**runtime_folders(["ccn/cuda_emulated"], under="runtime"),
            **runtime_files(["ccn/namespace.hpp"])}


def cmake_arguments(emulated: bool, nvcc: str | None = None, python: bool = False) -> list[str]:
    args = Toolchain.current().cmake_args(False, python, False)
    return args if emulated else args + [f"-DCMAKE_CUDA_COMPILER={nvcc}"]


def cached_cuda_runner(request: ProjectRequest, emulated: bool, nvcc: str | None = None) -> Path:
    """The runner of `request`'s GPU project, built into the cache once per content."""
    name = request.machine.name
    files = cuda_project_files(request, emulated)
    kind = "cuda-emulated" if emulated else "cuda"
    project = cached_build(f"fsm-{kind}-{name}", files, cmake_arguments(emulated, nvcc))
    return project / "build" / f"{name}_run"
