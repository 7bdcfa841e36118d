"""boostfsm's machine kinds as records: a DFA (an explicit machine, or a pattern set compiled
to one), a pattern set of several engines, and a token set. Each goes through the same
steps (analyse, run on either backend, compile a project); `boostfsm` finds the kind of a
compiled machine with kind_of and holds no switch on it."""

from __future__ import annotations

import json
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click

from parafuse.cli.errors import UsageError, exit_status
from parafuse.cli.fsm_engine_report import engine_set_json, print_engine_set_analysis
from parafuse.cli.fsm_gpu import (
    check_gpu_kind,
    compile_gpu_project,
    compile_gpu_token_project,
    gpu_runner,
    gpu_token_runner,
)
from parafuse.cli.fsm_inputs import check_input_readable, descriptors_named, read_input
from parafuse.cli.fsm_report import analysis_json, print_analysis, print_run
from parafuse.cli.fsm_runtime_choice import engine_choices, runner_for, runtime_choice
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
from parafuse.cli.fsm_warm_runs import WarmRun
from parafuse.emitters.fsm.project import ProjectRequest, cmake_arguments, project_files
from parafuse.emitters.toolchain.cmake import build_tree, write_tree
from parafuse.emitters.toolchain.openmp import runner_environment
from parafuse.fsm_compiler.compiled import CompiledMachine
from parafuse.fsm_compiler.engines.engine_set_reference import run_any_reference
from parafuse.fsm_compiler.engines.engines import EngineSet
from parafuse.fsm_compiler.pipeline import analyse_any, analyse_for_project
from parafuse.fsm_compiler.reference_executor import result_json
from parafuse.fsm_compiler.tokens.token_sets import CompiledTokenSet

Compiled = CompiledMachine | EngineSet | CompiledTokenSet


@dataclass(frozen=True)
class Report:
    """One machine's analysis: what `analyze` prints, and its `--json` object."""

    json: Callable[[], dict]
    show: Callable[[], None]


@dataclass(frozen=True)
class RunRequest:
    """`boostfsm run`'s request; `runner_args` are the runner's options (scheme, threads,
    chunks, repeat, --json), the same for every kind."""

    file: str
    input_path: str
    backend: str  # one of BACKENDS
    runner_args: list[str]
    scheme: str | None
    repeat: int
    matches: bool
    tokens: bool
    tokens_out: str | None
    as_json: bool
    warm: WarmRun | None = None  # where a built runner is recorded for warm runs

    @property
    def compiled(self) -> bool:
        return self.backend == "cpp"

    @property
    def gpu(self) -> bool:
        return self.backend in GPU_BACKENDS

    @property
    def may_run_warm(self) -> bool:
        """Whether a runner recorded for the same file and options may run it without a
        compile (cli/fsm_warm_runs.py): compiled runs other than a token set's."""
        return self.compiled and not self.tokens and self.tokens_out is None

    @property
    def dfa_runner_args(self) -> list[str]:
        """The runner's options for a DFA or pattern set."""
        return self.runner_args + (["--matches"] if self.matches else [])


# `run --backend`: the compiled runner (built into the cache), the Python reference, or the
# GPU runner (on a GPU, or on the emulated device: cli/fsm_gpu.py); `compile --backend`:
# the projects
GPU_BACKENDS = ("cuda", "cuda-emulated")
BACKENDS = ("reference", "cpp") + GPU_BACKENDS
COMPILE_BACKENDS = ("cpp",) + GPU_BACKENDS


def emulated(backend: str) -> bool:
    return backend == "cuda-emulated"


def check_compile_backend(machines: list[Compiled], backend: str) -> None:
    """Every machine has a project for `backend` (checked before any folder is written)."""
    if backend in GPU_BACKENDS:
        for machine in machines:
            check_gpu_kind(machine)


class Dfa:
    """One DFA: analysed by stage 4, run by its runner or the reference executor."""

    def analyse(self, machine: CompiledMachine, sample: bytes, sample_name: str, file: str,
                runner_input: str) -> Report:
        """`runner_input`: the sample as a file, which the machine's runner reads to say
        what its `auto` picks (probes included)."""
        analysis = analyse_any(machine, sample, sample_name)
        choice = runtime_choice(machine, file, runner_input)
        return Report(lambda: analysis_json(analysis, choice),
                      lambda: print_analysis(analysis, choice))

    def run(self, machine: CompiledMachine | EngineSet, request: RunRequest) -> int:
        if request.tokens or request.tokens_out:
            raise UsageError("--tokens and --tokens-out are for token sets")
        if request.gpu:
            runner = gpu_runner(machine, request.file, emulated(request.backend), request.scheme)
            return run_runner(runner, request.input_path, request.dfa_runner_args)
        if request.compiled:
            runner = runner_for(machine, request.file)
            if request.warm:
                request.warm.record(runner)
            return run_runner(runner, request.input_path, request.dfa_runner_args)
        data = read_input(request.input_path)
        timings, result = [], None
        for _ in range(request.repeat):
            began = time.perf_counter()
            result = run_any_reference(machine, data, request.matches)
            timings.append(time.perf_counter() - began)
        payload = result_json(machine, result, len(data), statistics.median(timings),
                              machine.options.scheme)
        if request.as_json:
            click.echo(json.dumps(payload))
        else:
            print_run(payload)
        return 0

    def compile(self, machine: CompiledMachine | EngineSet, file: str, folder: Path,
                python: bool, sample: bytes | None, no_build: bool, backend: str) -> None:
        if backend in GPU_BACKENDS:
            compile_gpu_project(machine, file, folder, python, sample, no_build,
                                emulated(backend))
            return
        files = project_files(ProjectRequest(machine, file, analyse_for_project(machine, sample),
                                             python))
        if no_build:
            write_tree(folder, files)
        else:
            build_tree(files, folder, cmake_arguments(python))


class EngineSetKind(Dfa):
    """A pattern set of several engines: every DFA engine analysed, the set's own `auto`."""

    def analyse(self, machine: EngineSet, sample: bytes, sample_name: str, file: str,
                runner_input: str) -> Report:
        analysis = analyse_any(machine, sample, sample_name)
        choices = engine_choices(machine, file, runner_input)
        return Report(lambda: engine_set_json(analysis, choices),
                      lambda: print_engine_set_analysis(analysis, choices))


class TokenSet:
    """A token set (a lexer): tokens, not matches."""

    def analyse(self, machine: CompiledTokenSet, sample: bytes, sample_name: str, file: str,
                runner_input: str) -> Report:
        choice = token_runtime_choice(machine, file, runner_input)
        analysis = analyse_token_set(machine, sample, sample_name, choice)
        return Report(lambda: token_analysis_json(analysis),
                      lambda: print_token_analysis(analysis))

    def run(self, machine: CompiledTokenSet, request: RunRequest) -> int:
        if request.matches:
            raise UsageError("a token set lists tokens (--tokens), not --matches")
        if not request.compiled and not request.gpu:
            run_reference_tokens(machine, read_input(request.input_path), request.repeat,
                                 request.tokens, request.tokens_out, request.as_json)
            return 0
        args = request.runner_args + (["--tokens"] if request.tokens else []) + (
            ["--tokens-out", request.tokens_out] if request.tokens_out else [])
        if request.gpu:
            runner = gpu_token_runner(machine, request.file, emulated(request.backend),
                                      request.scheme)
            return run_runner(runner, request.input_path, args)
        return run_cpp_tokens(machine, request.file, request.input_path, args,
                              descriptors_named(request.input_path))

    def compile(self, machine: CompiledTokenSet, file: str, folder: Path, python: bool,
                sample: bytes | None, no_build: bool, backend: str) -> None:
        if backend in GPU_BACKENDS:
            compile_gpu_token_project(machine, file, folder, python, no_build, emulated(backend))
            return
        compile_token_project(machine, file, folder, python, sample, no_build)


KINDS: dict[type, Dfa | EngineSetKind | TokenSet] = {
    CompiledMachine: Dfa(), EngineSet: EngineSetKind(), CompiledTokenSet: TokenSet()}


def kind_of(machine: Compiled) -> Dfa | EngineSetKind | TokenSet:
    return KINDS[type(machine)]


def run_runner(runner: Path, input_path: str, args: list[str]) -> int:
    """A machine's runner over the input (a pipe it names stays open for it)."""
    return exit_status(subprocess.run([str(runner), input_path, *args],
                                      pass_fds=descriptors_named(input_path),
                                      env=runner_environment()))


def run_machine(machine: Compiled, request: RunRequest) -> int:
    """`boostfsm run` of any kind: an input the runner could not read fails before a build."""
    if request.gpu:
        check_gpu_kind(machine)
    if request.compiled or request.gpu:
        check_input_readable(request.input_path)
    return kind_of(machine).run(machine, request)
