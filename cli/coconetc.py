"""`coconetc`: check, show and run .ccn programs (docs/ccn-language.md, sections 9-10)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from parafuse import __version__
from parafuse.ccn_compiler.frontend import CheckedModule, check_programs, schedule_programs
from parafuse.ccn_compiler.printer import format_program
from parafuse.ccn_compiler.reference_runner import RunOptions, run_reference
from parafuse.ccn_compiler.runner_io import check_folders, check_ranks
from parafuse.emitters.autotune import autotune as autotune_program
from parafuse.emitters.ccn.cpu import project as cpu
from parafuse.emitters.ccn.cpu.project import build_cpu_project
from parafuse.emitters.ccn.cuda import project as cuda
from parafuse.emitters.ccn.cuda.emulated import build_emulated_project
from parafuse.emitters.ccn.cuda.project import DEFAULT_CUDA_ARCH, build_cuda_project, tuning_builder
from parafuse.emitters.ccn.project_context import scheduled_plans
from parafuse.emitters.toolchain.cmake import build_tree, write_tree
from parafuse.emitters.toolchain.mpirun import run_ranks
from parafuse.emitters.toolchain.nvidia import find_nvcc, gpu_present
from parafuse.grammar.ccn_parser import parse_ccn

from .build_notice import announce_builds
from .errors import (
    CommandLine,
    UsageError,
    check_output_folder,
    read_source,
    reports_errors,
    writing_folder,
)

BACKENDS = ("reference", "cpu", "cuda", "cuda-emulated")
# cuda-emulated: the CUDA backend's code on the emulated device (the system's C++ compiler
# and MPI, no CUDA toolkit or GPU; cpp_runtime/ccn/cuda_emulated/README.md)


def _load(path: str) -> CheckedModule:
    """The front end, one step each (docs/architecture.md): parse, check, schedule."""
    module = parse_ccn(read_source(path, "utf-8"), path)
    if not module.programs:  # empty or comments only: every command says so, exit 1
        raise UsageError(f"{path} defines no program")
    return schedule_programs(module, check_programs(module), path)




@click.group(cls=CommandLine, prog="coconetc",
             help="Compile .ccn programs: computation fused with communication.")
@click.version_option(__version__, prog_name="coconetc", message="%(prog)s %(version)s")
def main() -> None:
    announce_builds("coconetc")


@main.command(help="Parse and check every program and schedule; report errors only.")
@click.argument("file", type=click.Path(dir_okay=False))
@reports_errors("coconetc")
def check(file: str) -> None:
    _load(file)


@main.command(help="Print a program with the dtype, shape and layout of every value.")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--program", "program_name", help="Program to show (default: the only one).")
@click.option("--schedule", default="default", show_default=True)
@reports_errors("coconetc")
def show(file: str, program_name: str | None, schedule: str) -> None:
    module = _load(file)
    program = module.scheduled_program(module.program(program_name).name, schedule)
    click.echo(format_program(program, schedule))


@main.command(help="Run a program on R ranks and write its outputs as .npy files.")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--program", "program_name", help="Program to run (default: the only one).")
@click.option("--schedule", default="default", show_default=True)
@click.option("--backend", type=click.Choice(BACKENDS), default="reference", show_default=True)
@click.option("-n", "ranks", type=int, required=True, help="Number of ranks R.")
@click.option("--size", "sizes", multiple=True, metavar="NAME=N")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--inputs", type=click.Path(file_okay=False), help="Directory of input .npy files.")
@click.option("--outputs", type=click.Path(file_okay=False), help="Directory for outputs.")
@click.option("--iters", type=int, default=1, show_default=True)
@click.option("--warmup", type=int, default=0, show_default=True)
@click.option("--random", "random_inputs", is_flag=True, help="Fill inputs from Philox.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@reports_errors("coconetc")
def run(file: str, program_name: str | None, schedule: str, backend: str, ranks: int,
        sizes: tuple[str, ...], params: tuple[str, ...], seed: int, inputs: str | None,
        outputs: str | None, iters: int, warmup: int, random_inputs: bool,
        as_json: bool) -> None:
    module = _load(file)
    program = module.scheduled_program(module.program(program_name).name, schedule)
    check_folders(inputs, outputs, random_inputs)  # before any build, on every backend
    if outputs:  # the reference's words on every backend (a runner's differ)
        check_output_folder(Path(outputs), "--outputs")
    check_ranks(program, ranks)  # the reference's words on every backend (mpirun's differ)
    options = RunOptions(ranks, sizes, params, seed, inputs, outputs, iters, warmup,
                         random_inputs)
    if backend != "reference":
        sys.exit(_run_compiled(module, program.name, schedule, options, as_json, backend))
    summary = run_reference(program, schedule, options)
    if as_json:
        click.echo(json.dumps(summary))
        return
    sizes_text = " ".join(f"{k}={v}" for k, v in summary["sizes"].items())
    click.echo(f"{program.name} [{schedule}] on {ranks} rank(s), {sizes_text}, backend reference: "
               f"{iters} step(s), median {summary['median_ms']:.3f} ms, "
               f"{summary['bytes_per_rank']} bytes sent per rank per step")
    if outputs:
        click.echo(f"outputs written to {outputs}/ (manifest.json lists them)")


def _require_nvcc_and_gpu(what: str, why: str) -> None:
    """One line naming what is missing, before anything is built or written."""
    missing = "nvcc" if find_nvcc() is None else None if gpu_present() else "an NVIDIA GPU"
    if missing:
        raise UsageError(f"{what} needs {missing} on this machine {why} and found none "
                         "(`coconetc build --backend cuda` writes and compiles the project "
                         "without a GPU)")


def _schedules(module: CheckedModule, program: str, schedule: str) -> list[str]:
    names = module.schedule_names(program)
    if schedule == "all":
        return names
    module.scheduled_program(program, schedule)  # an unknown schedule is an error
    return [schedule]


def _run_compiled(module: CheckedModule, program: str, schedule: str, options: RunOptions,
                  as_json: bool, backend: str) -> int:
    """Build every schedule of the program (cached by content) and launch R ranks."""
    # The same project `coconetc build FILE` makes, so that both share the cache.
    if backend == "cuda":  # run needs a GPU: compile for the one present
        _require_nvcc_and_gpu("run --backend cuda", "to run the program")
        project, _ = build_cuda_project(module, program, module.schedule_names(program),
                                        f"coconetc build {module.filename} --backend cuda",
                                        cuda_arch="native")
    elif backend == "cuda-emulated":
        project = build_emulated_project(module, program, module.schedule_names(program),
                                         f"coconetc build {module.filename} --backend {backend}")
    else:
        project = build_cpu_project(module, program, module.schedule_names(program),
                                    f"coconetc build {module.filename}")
    args = ["--schedule", schedule, "--seed", str(options.seed), "--iters", str(options.iters),
            "--warmup", str(options.warmup)]
    args += [a for size in options.sizes for a in ("--size", size)]
    args += [a for param in options.params for a in ("--param", param)]
    args += ["--inputs", options.inputs] if options.inputs else []
    args += ["--outputs", options.outputs] if options.outputs else []
    args += ["--random"] if options.random else []
    args += ["--json"] if as_json else []
    done = run_ranks(project, program, options.ranks, args)
    click.echo(done.stdout, nl=False)
    click.echo(done.stderr, nl=False, err=True)
    return 0 if done.returncode == 0 else 1


@main.command(help="Write a C++ project for one program and build it with CMake and Ninja.")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--program", "program_name", help="Program to build (default: the only one).")
@click.option("--schedule", default="all", show_default=True,
              help="A schedule, or `all` (the runner picks with --schedule).")
@click.option("--backend", type=click.Choice(BACKENDS[1:]), default="cpu", show_default=True)
@click.option("-o", "out_dir", type=click.Path(file_okay=False), help="Project folder.")
@click.option("--python", "python_module", is_flag=True, help="Also build a pybind11 module.")
@click.option("--autotune", is_flag=True, help="Time every schedule and chunk count, keep "
              "the fastest (needs -n and --size).")
@click.option("-n", "ranks", type=int, help="Ranks to autotune for.")
@click.option("--size", "sizes", multiple=True, metavar="NAME=N")
@click.option("--cuda-arch", default=DEFAULT_CUDA_ARCH, show_default=True,
              help="CUDA architectures (CMAKE_CUDA_ARCHITECTURES) for --backend cuda.")
@reports_errors("coconetc")
def build(file: str, program_name: str | None, schedule: str, backend: str,
          out_dir: str | None, python_module: bool, autotune: bool, ranks: int | None,
          sizes: tuple[str, ...], cuda_arch: str) -> None:
    module = _load(file)
    program = module.program(program_name)
    if out_dir == "":
        raise UsageError("-o: an empty path (name the project folder, or leave -o out)")
    if not autotune and (ranks is not None or sizes):
        given = ([f"-n {ranks}"] if ranks is not None else []) + [f"--size {s}" for s in sizes]
        wanted = " ".join(f"--size {name}=..." for name in program.size_vars)
        raise UsageError(f"{' and '.join(given)} {'are' if len(given) > 1 else 'is'} for "
                         f"--autotune only (the runner takes sizes at run time: "
                         f"{program.name}_run {wanted})")
    if autotune:
        _autotune(module, program.name, backend, ranks, sizes, out_dir, cuda_arch)
        return
    if backend == "cuda":
        _build_cuda(module, program.name, schedule, out_dir, python_module, cuda_arch)
        return
    if backend == "cuda-emulated":
        _build_emulated(module, program.name, schedule, out_dir, python_module)
        return
    schedules = _schedules(module, program.name, schedule)
    folder = Path(out_dir or f"{program.name}_cpu")
    command = "coconetc build " + " ".join(sys.argv[2:])
    plans = scheduled_plans(module, program.name, schedules)
    files = cpu.print_project(module, program.name, plans, command, python=python_module)
    with writing_folder(folder, "-o" if out_dir else None):
        build_tree(files, folder, cpu.cmake_arguments(python=python_module))
    click.echo(f"built {folder}/build/{program.name}_run with schedules: {', '.join(schedules)}")


def _autotune(module: CheckedModule, program: str, backend: str, ranks: int | None,
              sizes: tuple[str, ...], out_dir: str | None, cuda_arch: str) -> None:
    if ranks is None or not sizes:
        raise UsageError("--autotune needs -n R and --size NAME=N for the measurements")
    check_ranks(module.programs[program], ranks)
    builder = build_cpu_project
    if backend == "cuda-emulated":
        builder = build_emulated_project
    elif backend == "cuda":
        _require_nvcc_and_gpu("--autotune with --backend cuda", "to time the candidates")
        builder = tuning_builder(cuda_arch)
    folder = Path(out_dir or f"{program}_{backend.replace('-', '_')}")
    with writing_folder(folder, "-o" if out_dir else None):
        chosen = autotune_program(module, program, ranks, sizes, folder,
                                  "coconetc build " + " ".join(sys.argv[2:]),
                                  lambda line: click.echo(line, err=True), builder)
    click.echo(f"built {folder}/build/{program}_run; the autotuner chose {chosen} "
               f"(every candidate's time is in {folder}/tuning.json)")


def _build_cuda(module: CheckedModule, program: str, schedule: str, out_dir: str | None,
                python: bool, cuda_arch: str) -> None:
    schedules = _schedules(module, program, schedule)
    folder = Path(out_dir or f"{program}_cuda")
    command = "coconetc build " + " ".join(sys.argv[2:])
    plans = scheduled_plans(module, program, schedules)
    files = cuda.print_project(module, program, plans, command, cuda_arch, python)
    nvcc = find_nvcc()
    with writing_folder(folder, "-o" if out_dir else None):
        if nvcc is not None:
            build_tree(files, folder, cuda.cmake_arguments(nvcc, python))
        else:
            write_tree(folder, files)
    if nvcc is not None:
        click.echo(f"built {folder}/build/{program}_run (CUDA {cuda_arch}) with schedules: "
                   f"{', '.join(schedules)}")
    else:
        click.echo(f"no nvcc found: wrote the CUDA sources to {folder}/ without building them "
                   f"(schedules: {', '.join(schedules)})")


def _build_emulated(module: CheckedModule, program: str, schedule: str, out_dir: str | None,
                    python: bool) -> None:
    if python:
        raise UsageError("--python is not available with --backend cuda-emulated: the Python "
                         "module hands out device memory that only a GPU framework can read "
                         "(use --backend cpu or cuda)")
    schedules = _schedules(module, program, schedule)
    folder = Path(out_dir or f"{program}_cuda_emulated")
    with writing_folder(folder, "-o" if out_dir else None):
        build_emulated_project(module, program, schedules,
                               "coconetc build " + " ".join(sys.argv[2:]), folder)
    click.echo(f"built {folder}/build/{program}_run (CUDA on the emulated device) with "
               f"schedules: {', '.join(schedules)}")


if __name__ == "__main__":
    main()
