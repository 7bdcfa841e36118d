"""`boostfsm`: check, analyse and run finite-state machines (.fsm).

    boostfsm check FILE
    boostfsm analyze FILE [--machine M] [--input SAMPLE] [--json]
    boostfsm run FILE INPUT [--backend cpp|reference] [--machine M] [runner options]
    boostfsm compile FILE [--machine M] [-o DIR] [--python] [--train SAMPLE] [--no-build]
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import click

from parafuse import __version__
from parafuse.cli.build_notice import announce_builds
from parafuse.cli.errors import (
    CommandLine,
    UsageError,
    check_output_folder,
    exit_status,
    read_source,
    reports_errors,
    writing_folder,
)
from parafuse.cli.fsm_engine_report import any_analysis_json, print_any_analysis
from parafuse.cli.fsm_report import analysis_json, print_analysis, print_run
from parafuse.cli.fsm_runtime_choice import runner_for, runtime_choice
from parafuse.cli.fsm_token_commands import (
    compile_token_project,
    run_cpp_tokens,
    run_reference_tokens,
    token_runtime_choice,
)
from parafuse.cli.fsm_token_report import (
    analyse_token_set,
    print_token_analysis,
    token_analysis_json,
)
from parafuse.emitters.fsm.project import (
    ProjectRequest,
    cmake_arguments,
    project_files,
)
from parafuse.emitters.toolchain.cmake import build_tree, write_tree
from parafuse.fsm_compiler.compiled import CompiledMachine
from parafuse.fsm_compiler.engine_set_reference import run_any_reference
from parafuse.fsm_compiler.engines import EngineSet
from parafuse.fsm_compiler.options import INTEGER_LIMITS, RUN_LIMITS, SCHEMES
from parafuse.fsm_compiler.pipeline import (
    CompiledFile,
    EngineSetAnalysis,
    MachineAnalysis,
    analyse_any,
    analyse_for_project,
    compile_machines,
    parse_file,
    random_sample,
)
from parafuse.fsm_compiler.reference_executor import result_json
from parafuse.fsm_compiler.token_sets import CompiledTokenSet
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


def _read_input(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise UsageError(f"cannot read input '{path}': {exc.strerror}") from None


def _check_input_readable(path: str) -> None:
    """Fail now, before a build, where the compiled runner could not read `path`. Only a
    regular file is opened: opening a FIFO waits for its writer, and closing it unread
    would cut the writer off (SIGPIPE), so other files are checked by their status."""
    if path == "-":
        return
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        if stat.S_ISREG(info.st_mode):
            with open(path, "rb"):
                pass
        elif not os.access(path, os.R_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
    except OSError as exc:
        raise UsageError(f"cannot read input '{path}': {exc.strerror}") from None


def _descriptors_named(path: str) -> tuple[int, ...]:
    """The open descriptor of this process that `path` names, as `/dev/fd/N` (what a
    shell's `<(command)` gives), for the runner to inherit: without it the runner finds
    no descriptor N of its own to read."""
    found = re.fullmatch(r"/(?:dev|proc/self)/fd/(\d+)", os.path.normpath(path))
    if found is None or int(found[1]) <= 2:  # 0-2 are inherited anyway
        return ()
    try:
        os.fstat(int(found[1]))
    except OSError:
        return ()
    return (int(found[1]),)


@contextlib.contextmanager
def _sample_file(path: str, data: bytes) -> Iterator[str]:
    """A path the runner can read `data` (already read from `path`) from again: `path`
    itself where it is a regular file, else a temporary copy (a FIFO or a pipe is read
    once)."""
    if path != "-" and os.path.isfile(path):
        yield path
        return
    with tempfile.NamedTemporaryFile(prefix="boostfsm-sample-") as copy:
        copy.write(data)
        copy.flush()
        yield copy.name


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
                   "and the scheme 'auto' would pick.")
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
        sample, sample_name = _read_input(sample_path), sample_path
    with contextlib.ExitStack() as stack:
        runner_input = (stack.enter_context(_sample_file(sample_path, sample))
                        if sample_path else None)
        analyses = [analyse_token_set(m, sample, sample_name,
                                      token_runtime_choice(m, file, runner_input)
                                      if runner_input else None)
                    if isinstance(m, CompiledTokenSet) else analyse_any(m, sample, sample_name)
                    for m in compiled.machines]
        # With --input, `auto picks` is the runner's own choice on that input (probes
        # included) for a single DFA and a token set; engine sets say what their auto
        # picks themselves.
        measured = [runtime_choice(m, file, runner_input)
                    if runner_input and isinstance(m, CompiledMachine) else None
                    for m in compiled.machines]
    if as_json:
        click.echo(json.dumps([_analysis_json(a, choice)
                               for a, choice in zip(analyses, measured, strict=True)], indent=2))
    else:
        for analysis, choice in zip(analyses, measured, strict=True):
            _print_analysis(analysis, choice)


def _analysis_json(analysis, choice) -> dict:
    if isinstance(analysis, MachineAnalysis):
        return analysis_json(analysis, choice)
    if isinstance(analysis, EngineSetAnalysis):
        return any_analysis_json(analysis)
    return token_analysis_json(analysis)


def _print_analysis(analysis, choice) -> None:
    if isinstance(analysis, MachineAnalysis):
        print_analysis(analysis, choice)
    elif isinstance(analysis, EngineSetAnalysis):
        print_any_analysis(analysis)
    else:
        print_token_analysis(analysis)


def _only_machine(compiled: CompiledFile, path: str) -> CompiledMachine | EngineSet:
    if len(compiled.machines) > 1:
        names = ", ".join(m.name for m in compiled.machines)
        raise UsageError(f"'{path}' has several machines ({names}); choose one with --machine")
    return compiled.machines[0]


@main.command(help="Run a machine over INPUT (a file or '-') and print the result.")
@click.argument("file")
@click.argument("input_path", metavar="INPUT")
@click.option("--machine", help="The machine to run (needed when FILE has several).")
@click.option("--backend", type=click.Choice(["reference", "cpp"]), default="cpp",
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
    compiled_machine = _only_machine(_compile(file, overrides, machine), file)
    if backend == "cpp":
        _check_input_readable(input_path)
    if isinstance(compiled_machine, CompiledTokenSet):
        if with_matches:
            raise UsageError("a token set lists tokens (--tokens), not --matches")
        if backend == "reference":
            run_reference_tokens(compiled_machine, _read_input(input_path), repeat,
                                 with_tokens, tokens_out, as_json)
            return
        args = _runner_args(scheme, threads, chunks, repeat, False, as_json)
        args += (["--tokens"] if with_tokens else []) + (
            ["--tokens-out", tokens_out] if tokens_out else [])
        sys.exit(run_cpp_tokens(compiled_machine, file, input_path, args,
                                _descriptors_named(input_path)))
    if with_tokens or tokens_out:
        raise UsageError("--tokens and --tokens-out are for token sets")
    if backend == "cpp":
        runner_args = _runner_args(scheme, threads, chunks, repeat, with_matches, as_json)
        sys.exit(_run_cpp(compiled_machine, file, input_path, runner_args))
    data = _read_input(input_path)
    timings, result = [], None
    for _ in range(repeat):
        began = time.perf_counter()
        result = run_any_reference(compiled_machine, data, with_matches)
        timings.append(time.perf_counter() - began)
    payload = result_json(compiled_machine, result, len(data), statistics.median(timings),
                          compiled_machine.options.scheme)
    if as_json:
        click.echo(json.dumps(payload))
    else:
        print_run(payload)


def _runner_args(scheme, threads, chunks, repeat, with_matches, as_json) -> list[str]:
    args = ["--threads", str(threads), "--chunks", str(chunks), "--repeat", str(repeat)]
    args += ["--scheme", scheme] if scheme else []
    args += ["--matches"] if with_matches else []
    return args + (["--json"] if as_json else [])


def _run_cpp(machine: CompiledMachine | EngineSet, file: str, input_path: str,
             args: list[str]) -> int:
    """Build (or find in the cache) the machine's project and run its runner."""
    runner = runner_for(machine, file)
    return exit_status(subprocess.run([str(runner), input_path, *args],
                                      pass_fds=_descriptors_named(input_path)))


@main.command("compile", help="Emit a C++ project per machine (library M::M, runner M_run) "
                              "and build it with CMake and Ninja.")
@click.argument("file")
@click.option("--machine", help="Compile only this machine.")
@click.option("-o", "out_dir", help="Project folder (default: the machine's name; with several "
                                    "machines, one subfolder each).")
@click.option("--python", "with_python", is_flag=True, help="Also build the pybind11 module.")
@click.option("--train", "train_path", help="Sample input for auto's compile-time analysis.")
@click.option("--no-build", is_flag=True, help="Write the project without building it.")
@option_flags
@reports_errors(PROG)
def compile_command(file, machine, out_dir, with_python, train_path, no_build, max_states,
                    max_fused_states, lookback) -> None:
    _no_empty_path("-o", out_dir)
    _no_empty_path("--train", train_path)
    compiled = _compile(file, _overrides(max_states, max_fused_states, lookback), machine)
    sample = _read_input(train_path) if train_path else None
    several = len(compiled.machines) > 1
    folders = [Path(out_dir or m.name) / (m.name if several and out_dir else "")
               for m in compiled.machines]
    for folder in folders:  # every folder is checked before any is written
        check_output_folder(folder, "-o" if out_dir else None)
    for compiled_machine, folder in zip(compiled.machines, folders, strict=True):
        with writing_folder(folder, "-o" if out_dir else None):
            _compile_one(compiled_machine, file, folder, with_python, sample, no_build)
        built = "" if no_build else f"; built {folder / 'build' / (compiled_machine.name + '_run')}"
        click.echo(f"wrote {folder} (machine {compiled_machine.name}){built}")


def _compile_one(compiled_machine, file: str, folder: Path, with_python: bool,
                 sample: bytes | None, no_build: bool) -> None:
    if isinstance(compiled_machine, CompiledTokenSet):
        compile_token_project(compiled_machine, file, folder, with_python, sample, no_build)
        return
    analysis = analyse_for_project(compiled_machine, sample)
    files = project_files(ProjectRequest(compiled_machine, file, analysis, with_python))
    if no_build:
        write_tree(folder, files)
    else:
        build_tree(files, folder, cmake_arguments(with_python))


if __name__ == "__main__":
    main()
