"""`coconetc`: check, show and run .ccn programs (docs/ccn-language.md, sections 9-10)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from parafuse import __version__
from parafuse.ccn_compiler.frontend import CheckedModule, check_programs, schedule_programs
from parafuse.ccn_compiler.printer import format_program
from parafuse.ccn_compiler.reference.runner import RunOptions
from parafuse.ccn_compiler.reference.runner_io import check_folders, check_ranks
from parafuse.emitters.autotune import autotune as autotune_program
from parafuse.emitters.ccn.cuda.project import DEFAULT_CUDA_ARCH
from parafuse.grammar.ccn_parser import parse_ccn

from .build_notice import announce_builds
from .ccn_backends import BACKENDS, BUILT, Backend, BuildRequest
from .errors import (
    CommandLine,
    UsageError,
    check_output_folder,
    read_source,
    reports_errors,
    writing_folder,
)


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
@click.option("--backend", type=click.Choice(list(BACKENDS)), default="reference",
              show_default=True)
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
    sys.exit(BACKENDS[backend].run(module, program.name, schedule, options, as_json))


def _schedules(module: CheckedModule, program: str, schedule: str) -> list[str]:
    names = module.schedule_names(program)
    if schedule == "all":
        return names
    module.scheduled_program(program, schedule)  # an unknown schedule is an error
    return [schedule]


@main.command(help="Write a C++ project for one program and build it with CMake and Ninja.")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--program", "program_name", help="Program to build (default: the only one).")
@click.option("--schedule", default="all", show_default=True,
              help="A schedule, or `all` (the runner picks with --schedule).")
@click.option("--backend", type=click.Choice(BUILT), default="cpu", show_default=True)
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
    chosen = BACKENDS[backend]
    if autotune:
        _autotune(module, program.name, chosen, ranks, sizes, out_dir, cuda_arch)
        return
    if python_module and chosen.no_python:
        raise UsageError(f"--python is not available with --backend {backend}: "
                         f"{chosen.no_python}")
    schedules = _schedules(module, program.name, schedule)
    folder = Path(out_dir) if out_dir else chosen.default_folder(program.name)
    request = BuildRequest(module, program.name, schedules, folder,
                           "coconetc build " + " ".join(sys.argv[2:]), python_module, cuda_arch)
    with writing_folder(folder, "-o" if out_dir else None):
        line = chosen.build(request)
    click.echo(line)


def _autotune(module: CheckedModule, program: str, backend: Backend, ranks: int | None,
              sizes: tuple[str, ...], out_dir: str | None, cuda_arch: str) -> None:
    if ranks is None or not sizes:
        raise UsageError("--autotune needs -n R and --size NAME=N for the measurements")
    check_ranks(module.programs[program], ranks)
    builder = backend.tuning_builder(cuda_arch)
    folder = Path(out_dir) if out_dir else backend.default_folder(program)
    with writing_folder(folder, "-o" if out_dir else None):
        chosen = autotune_program(module, program, ranks, sizes, folder,
                                  "coconetc build " + " ".join(sys.argv[2:]),
                                  lambda line: click.echo(line, err=True), builder)
    click.echo(f"built {folder}/build/{program}_run; the autotuner chose {chosen} "
               f"(every candidate's time is in {folder}/tuning.json)")


if __name__ == "__main__":
    main()
