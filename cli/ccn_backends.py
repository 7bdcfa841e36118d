"""coconetc's backends as records: how each runs a program, builds a project into a
folder, and builds the autotuner's candidates, and what each needs on the machine.
`coconetc` looks a backend up in BACKENDS and holds no switch on its name."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click

from parafuse.ccn_compiler.frontend import CheckedModule
from parafuse.ccn_compiler.reference.runner import RunOptions, run_reference
from parafuse.emitters.ccn.backend import ProjectBuilder
from parafuse.emitters.ccn.cpu import project as cpu
from parafuse.emitters.ccn.cuda import project as cuda
from parafuse.emitters.ccn.cuda.emulated import build_emulated_project
from parafuse.emitters.toolchain.cmake import build_tree, write_tree
from parafuse.emitters.toolchain.mpirun import run_ranks
from parafuse.emitters.toolchain.nvidia import find_nvcc, gpu_present

from .errors import UsageError


@dataclass(frozen=True)
class BuildRequest:
    """`coconetc build`'s request: the schedules of one program into one folder."""

    module: CheckedModule
    program: str
    schedules: list[str]
    folder: Path
    command: str  # the command line, written into the project's banner
    python: bool
    cuda_arch: str


@dataclass(frozen=True)
class Backend:
    name: str
    # `coconetc run`: run the program's schedule on options.ranks ranks; the exit code
    run: Callable[[CheckedModule, str, str, RunOptions, bool], int]
    # `coconetc build`: write and build the project into request.folder; the line to print
    build: Callable[[BuildRequest], str] | None = None
    # `coconetc build --autotune`: the builder of the candidates, for --cuda-arch
    tuning_builder: Callable[[str], ProjectBuilder] | None = None
    # why `build --python` is refused, where it is
    no_python: str | None = None

    def default_folder(self, program: str) -> Path:
        return Path(f"{program}_{self.name.replace('-', '_')}")


def require_nvcc_and_gpu(what: str, why: str) -> None:
    """One line naming what is missing, before anything is built or written."""
    missing = "nvcc" if find_nvcc() is None else None if gpu_present() else "an NVIDIA GPU"
    if missing:
        raise UsageError(f"{what} needs {missing} on this machine {why} and found none "
                         "(`coconetc build --backend cuda` writes and compiles the project "
                         "without a GPU)")


def _run_reference(module: CheckedModule, program: str, schedule: str, options: RunOptions,
                   as_json: bool) -> int:
    summary = run_reference(module.scheduled_program(program, schedule), schedule, options)
    if as_json:
        click.echo(json.dumps(summary))
        return 0
    sizes_text = " ".join(f"{k}={v}" for k, v in summary["sizes"].items())
    click.echo(f"{program} [{schedule}] on {options.ranks} rank(s), {sizes_text}, backend "
               f"reference: {options.iters} step(s), median {summary['median_ms']:.3f} ms, "
               f"{summary['bytes_per_rank']} bytes sent per rank per step")
    if options.outputs:
        click.echo(f"outputs written to {options.outputs}/ (manifest.json lists them)")
    return 0


def runner_args(schedule: str, options: RunOptions, as_json: bool) -> list[str]:
    """The runner's command line for `coconetc run`'s options."""
    args = ["--schedule", schedule, "--seed", str(options.seed), "--iters", str(options.iters),
            "--warmup", str(options.warmup)]
    args += [a for size in options.sizes for a in ("--size", size)]
    args += [a for param in options.params for a in ("--param", param)]
    args += ["--inputs", options.inputs] if options.inputs else []
    args += ["--outputs", options.outputs] if options.outputs else []
    args += ["--random"] if options.random else []
    return args + (["--json"] if as_json else [])


def compiled_runner(build_cached: Callable[[CheckedModule, str, str], Path]
                    ) -> Callable[[CheckedModule, str, str, RunOptions, bool], int]:
    """`run` of a compiled backend: build every schedule of the program (the project that
    `coconetc build FILE` makes, cached by content, so that both share the cache) and
    launch R ranks of its runner."""

    def run(module: CheckedModule, program: str, schedule: str, options: RunOptions,
            as_json: bool) -> int:
        project = build_cached(module, program, f"coconetc build {module.filename}")
        done = run_ranks(project, program, options.ranks,
                         runner_args(schedule, options, as_json))
        click.echo(done.stdout, nl=False)
        click.echo(done.stderr, nl=False, err=True)
        return 0 if done.returncode == 0 else 1

    return run


def _cached_cpu(module: CheckedModule, program: str, command: str) -> Path:
    return cpu.build_cpu_project(module, program, module.schedule_names(program), command)


def _cached_cuda(module: CheckedModule, program: str, command: str) -> Path:
    require_nvcc_and_gpu("run --backend cuda", "to run the program")
    project, _ = cuda.build_cuda_project(module, program, module.schedule_names(program),
                                         f"{command} --backend cuda", cuda_arch="native")
    return project  # compiled for the GPU present


def _cached_emulated(module: CheckedModule, program: str, command: str) -> Path:
    return build_emulated_project(module, program, module.schedule_names(program),
                                  f"{command} --backend cuda-emulated")


def _build_cpu(request: BuildRequest) -> str:
    files = cpu.project_files(request.module, request.program, request.schedules,
                              request.command, python=request.python)
    build_tree(files, request.folder, cpu.cmake_arguments(python=request.python))
    return (f"built {request.folder}/build/{request.program}_run with schedules: "
            f"{', '.join(request.schedules)}")


def _build_cuda(request: BuildRequest) -> str:
    files = cuda.project_files(request.module, request.program, request.schedules,
                               request.command, request.cuda_arch, request.python)
    nvcc = find_nvcc()
    if nvcc is None:
        write_tree(request.folder, files)
        return (f"no nvcc found: wrote the CUDA sources to {request.folder}/ without building "
                f"them (schedules: {', '.join(request.schedules)})")
    build_tree(files, request.folder, cuda.cmake_arguments(nvcc, request.python))
    return (f"built {request.folder}/build/{request.program}_run (CUDA {request.cuda_arch}) "
            f"with schedules: {', '.join(request.schedules)}")


def _build_emulated(request: BuildRequest) -> str:
    build_emulated_project(request.module, request.program, request.schedules,
                           request.command, request.folder)
    return (f"built {request.folder}/build/{request.program}_run (CUDA on the emulated device) "
            f"with schedules: {', '.join(request.schedules)}")


def _cuda_tuning(cuda_arch: str) -> ProjectBuilder:
    require_nvcc_and_gpu("--autotune with --backend cuda", "to time the candidates")
    return cuda.tuning_builder(cuda_arch)


BACKENDS: dict[str, Backend] = {backend.name: backend for backend in (
    Backend("reference", _run_reference),
    Backend("cpu", compiled_runner(_cached_cpu), _build_cpu,
            lambda _arch: cpu.build_cpu_project),
    Backend("cuda", compiled_runner(_cached_cuda), _build_cuda, _cuda_tuning),
    # the CUDA backend's code on the emulated device (the system's C++ compiler and MPI,
    # no CUDA toolkit or GPU; cpp_runtime/ccn/cuda_emulated/README.md)
    Backend("cuda-emulated", compiled_runner(_cached_emulated), _build_emulated,
            lambda _arch: build_emulated_project,
            no_python="the Python module hands out device memory that only a GPU framework "
                      "can read (use --backend cpu or cuda)"),
)}
BUILT = tuple(name for name, backend in BACKENDS.items() if backend.build is not None)
