"""`boostfsm`: check, analyse and run finite-state machines (.fsm).

    boostfsm check FILE
    boostfsm analyze FILE [--machine M] [--input SAMPLE] [--json]
    boostfsm run FILE INPUT [--backend cpp|reference|cuda|cuda-emulated] [--machine M]
                            [runner options]
    boostfsm compile FILE [--machine M] [-o DIR] [--backend cpp|cuda|cuda-emulated]
                          [--python] [--train SAMPLE] [--no-build]
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import click

from parafuse import __version__
from parafuse.cli.build_notice import announce_builds
from parafuse.cli.errors import (
    CommandLine,
    UsageError,
    check_output_folder,
    read_source,
    reports_errors,
    writing_folder,
)
from parafuse.cli.fsm_inputs import check_input_readable, read_input, sample_file
from parafuse.cli.fsm_kinds import (
    BACKENDS,
    COMPILE_BACKENDS,
    Compiled,
    RunRequest,
    check_compile_backend,
    kind_of,
    run_machine,
    run_runner,
)
from parafuse.cli.fsm_warm_runs import WarmRun, indexed_runner, warm_key
from parafuse.fsm_compiler.options import INTEGER_LIMITS, RUN_LIMITS, SCHEMES
from parafuse.fsm_compiler.pipeline import (
    CompiledFile,
    compile_machines,
    parse_file,
    random_sample,
)
from parafuse.grammar.diagnostics import SourceFile

PROG = "boostfsm"


def option_flags(command: Callable) -> Callable:
    """Flags that override `options` blocks (docs/fsm-language.md section 5), with the
    ranges an `options` block enforces (fsm_compiler/options.py, the one place they live)."""
    flags = [
        click.option("--max-states", type=click.IntRange(*INTEGER_LIMITS["max_states"]),
                     help="DFA state limit."),
        click.option("--max-fused-states",
                     type=click.IntRange(*INTEGER_LIMITS["max_fused_states"]),
                     help="Fused-state bound."),
        click.option("--lookback", type=click.IntRange(*INTEGER_LIMITS["lookback"]),
                     help="Lookback bytes for spec."),
    ]
    for flag in reversed(flags):
        command = flag(command)
    return command


def _overrides(max_states, max_fused_states, lookback, scheme=None) -> dict:
    given = {"max_states": max_states, "max_fused_states": max_fused_states,
             "lookback": lookback, "scheme": scheme}
    return {key: value for key, value in given.items() if value is not None}


def _compile(path: str, overrides: dict, machine: str | None) -> CompiledFile:
    """Stages 1 (parse) and 2-3 (automata) of docs/architecture.md, one call each."""
    fsm_file = parse_file(SourceFile(path, read_source(path, "latin-1")))
    compiled = compile_machines(fsm_file, overrides, only=machine)
    for warning in compiled.warnings:
        click.echo(warning.render(), err=True)
    if machine is not None and not compiled.machines:
        names = ", ".join(m.name.name for m in compiled.fsm_file.machines)
        raise UsageError(f"'{path}' has no machine named '{machine}' (it has: {names})")
    return compiled


def _no_empty_path(option: str, path: str | None) -> None:
    """An empty path given to `option` is a mistake, not a request to skip the file or to
    fall back on a default."""
    if path == "":
        raise UsageError(f"{option}: an empty path")


@click.group(cls=CommandLine, prog=PROG,
             help="Compile finite-state machines (.fsm) to parallel C++.")
@click.version_option(__version__, prog_name=PROG, message="%(prog)s %(version)s")
def main() -> None:
    announce_builds(PROG)


@main.command(help="Parse and compile every machine; report errors and warnings only.")
@click.argument("file")
@option_flags
@reports_errors(PROG)
def check(file: str, max_states, max_fused_states, lookback) -> None:
    _compile(file, _overrides(max_states, max_fused_states, lookback), None)


@main.command(help="Print states, byte classes, fused states, convergence, lookback accuracy "
                   "and the scheme 'auto' picks on the sample (the machine's runner is "
                   "built, as by 'run', and asked).")
@click.argument("file")
@click.option("--machine", help="Analyse only this machine.")
@click.option("--input", "sample_path", help="Sample input (default: 64 KiB of random bytes).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@option_flags
@reports_errors(PROG)
def analyze(file, machine, sample_path, as_json, max_states, max_fused_states, lookback) -> None:
    compiled = _compile(file, _overrides(max_states, max_fused_states, lookback), machine)
    if sample_path is None:
        sample, sample_name = random_sample(), "random bytes (no --input)"
    else:
        sample, sample_name = read_input(sample_path), sample_path
    with sample_file(sample_path, sample) as runner_input:
        reports = [kind_of(m).analyse(m, sample, sample_name, file, runner_input)
                   for m in compiled.machines]
    if as_json:
        click.echo(json.dumps([report.json() for report in reports], indent=2))
    else:
        for report in reports:
            report.show()


def _only_machine(compiled: CompiledFile, path: str) -> Compiled:
    if len(compiled.machines) > 1:
        names = ", ".join(m.name for m in compiled.machines)
        raise UsageError(f"'{path}' has several machines ({names}); choose one with --machine")
    return compiled.machines[0]


@main.command(help="Run a machine over INPUT (a file or '-') and print the result.")
@click.argument("file")
@click.argument("input_path", metavar="INPUT")
@click.option("--machine", help="The machine to run (needed when FILE has several).")
@click.option("--backend", type=click.Choice(BACKENDS), default="cpp",
              show_default=True, help="Where to run the machine.")
@click.option("--scheme", type=click.Choice(SCHEMES), help="Scheme to request.")
@click.option("--threads", type=click.IntRange(*RUN_LIMITS["threads"]), default=0,
              help="Threads (cpp backend; 0: OpenMP's default).")
@click.option("--chunks", type=click.IntRange(*RUN_LIMITS["chunks"]), default=0,
              help="Chunks (cpp backend; 0: the runner picks).")
@click.option("--repeat", type=click.IntRange(1), default=1, help="Runs; seconds is the median.")
@click.option("--matches", "with_matches", is_flag=True, help="List every match.")
@click.option("--json", "as_json", is_flag=True, help="Print the runner's JSON object.")
@click.option("--tokens", "with_tokens", is_flag=True, help="Token sets: list every token.")
@click.option("--tokens-out", help="Token sets: write the tokens to this .npy file.")
@option_flags
@reports_errors(PROG)
def run(file, input_path, machine, backend, scheme, threads, chunks, repeat, with_matches,
        as_json, with_tokens, tokens_out, max_states, max_fused_states, lookback) -> None:
    _no_empty_path("--tokens-out", tokens_out)
    overrides = _overrides(max_states, max_fused_states, lookback, scheme)
    runner_args = ["--threads", str(threads), "--chunks", str(chunks), "--repeat", str(repeat)]
    runner_args += (["--scheme", scheme] if scheme else []) + (["--json"] if as_json else [])
    request = RunRequest(file, input_path, backend, runner_args, scheme, repeat, with_matches,
                         with_tokens, tokens_out, as_json)
    key = warm_key(file, machine, overrides) if request.may_run_warm else None
    if key and (found := indexed_runner(key)):  # built before from the same file and options
        runner, warnings = found
        if warnings:
            click.echo(warnings, err=True)
        check_input_readable(input_path)
        sys.exit(run_runner(runner, input_path, request.dfa_runner_args))
    compiled = _compile(file, overrides, machine)
    warm = WarmRun(key, "\n".join(w.render() for w in compiled.warnings)) if key else None
    sys.exit(run_machine(_only_machine(compiled, file), replace(request, warm=warm)))


@main.command("compile", help="Emit a C++ project per machine (library M::M, runner M_run) "
                              "and build it with CMake and Ninja.")
@click.argument("file")
@click.option("--machine", help="Compile only this machine.")
@click.option("-o", "out_dir", help="Project folder (default: the machine's name; with several "
                                    "machines, one subfolder each).")
@click.option("--backend", type=click.Choice(COMPILE_BACKENDS), default="cpp",
              show_default=True, help="The project's target: CPUs, a GPU, or the emulated GPU.")
@click.option("--python", "with_python", is_flag=True, help="Also build the pybind11 module.")
@click.option("--train", "train_path", help="Sample input for auto's compile-time analysis.")
@click.option("--no-build", is_flag=True, help="Write the project without building it.")
@option_flags
@reports_errors(PROG)
def compile_command(file, machine, out_dir, backend, with_python, train_path, no_build,
                    max_states, max_fused_states, lookback) -> None:
    _no_empty_path("-o", out_dir)
    _no_empty_path("--train", train_path)
    compiled = _compile(file, _overrides(max_states, max_fused_states, lookback), machine)
    sample = read_input(train_path) if train_path else None
    several = len(compiled.machines) > 1
    folders = [Path(out_dir or m.name) / (m.name if several and out_dir else "")
               for m in compiled.machines]
    check_compile_backend(compiled.machines, backend)
    for folder in folders:  # every folder is checked before any is written
        check_output_folder(folder, "-o" if out_dir else None)
    for compiled_machine, folder in zip(compiled.machines, folders, strict=True):
        with writing_folder(folder, "-o" if out_dir else None):
            kind_of(compiled_machine).compile(compiled_machine, file, folder, with_python,
                                              sample, no_build, backend)
        built = "" if no_build else f"; built {folder / 'build' / (compiled_machine.name + '_run')}"
        click.echo(f"wrote {folder} (machine {compiled_machine.name}){built}")


if __name__ == "__main__":
    main()
