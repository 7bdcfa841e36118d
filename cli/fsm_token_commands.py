"""What `boostfsm run` and `boostfsm compile` do for a token set (cli/boostfsm.py calls
these where the machine is one)."""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import time
from pathlib import Path

import click
import numpy as np

from parafuse.cli.errors import UsageError, exit_status
from parafuse.cli.fsm_token_report import print_token_run
from parafuse.emitters.fsm.project import cmake_arguments
from parafuse.emitters.fsm.token_project import (
    TokenHints,
    cached_token_project,
    token_hints,
    token_project_files,
)
from parafuse.emitters.toolchain.cmake import build_tree, write_tree
from parafuse.emitters.toolchain.openmp import runner_environment
from parafuse.fsm_compiler.tokens.reference_tokenizer import tokenize, tokens_json
from parafuse.fsm_compiler.tokens.token_sets import CompiledTokenSet

TOKEN_DTYPE = np.dtype({"names": ["start", "end", "kind"], "formats": ["<u8", "<u8", "<u2"],
                        "offsets": [0, 8, 16], "itemsize": 24})


def write_tokens_npy(path: str, token_set: CompiledTokenSet, data: bytes) -> None:
    """The reference tokens as the runner's .npy, written atomically (temporary, rename)."""
    tokens = tokenize(token_set, data)
    records = np.zeros(len(tokens), dtype=TOKEN_DTYPE)
    if tokens:
        kinds, starts, ends = zip(*tokens)
        records["start"], records["end"], records["kind"] = starts, ends, kinds
    temporary = f"{path}.tmp{os.getpid()}"
    try:
        with open(temporary, "wb") as handle:
            np.save(handle, records)
        os.replace(temporary, path)
    except OSError as exc:
        with contextlib.suppress(OSError):  # never made, where the folder is not one
            Path(temporary).unlink(missing_ok=True)
        raise UsageError(f"--tokens-out {path}: cannot write the file: {exc.strerror}") from None


def run_reference_tokens(token_set: CompiledTokenSet, data: bytes, repeat: int,
                         with_tokens: bool, tokens_out: str | None, as_json: bool) -> None:
    timings, payload = [], {}
    for _ in range(repeat):
        began = time.perf_counter()
        payload = tokens_json(token_set, data, with_tokens, 0.0, token_set.options.scheme)
        timings.append(time.perf_counter() - began)
    seconds = statistics.median(timings)
    payload.update(seconds=seconds, gbps=len(data) / seconds / 1e9 if seconds > 0 else 0.0)
    if tokens_out:
        write_tokens_npy(tokens_out, token_set, data)
    if as_json:
        click.echo(json.dumps(payload))
    else:
        print_token_run(payload)


def run_cpp_tokens(token_set: CompiledTokenSet, file: str, input_path: str,
                   args: list[str], inherited: tuple[int, ...] = ()) -> int:
    """Build (or find in the cache) the token set's project and run its runner (which
    inherits the descriptors `inherited`, a `/dev/fd/N` input's)."""
    project = cached_token_project(token_set, file, TokenHints())
    runner = project / "build" / f"{token_set.name}_run"
    return exit_status(subprocess.run([str(runner), input_path, *args], pass_fds=inherited,
                                      env=runner_environment()))


def token_runtime_choice(token_set: CompiledTokenSet, file: str,
                         input_path: str) -> tuple[str, str]:
    """(scheme, reason) of the runner's `auto` over the file `input_path`, with the default
    thread count: `boostfsm analyze --input` replays the runtime itself (its probe of an
    input of 1 MiB or more, cpp_runtime/fsm/tokens/auto.hpp), so that what it prints is
    what `boostfsm run` runs."""
    project = cached_token_project(token_set, file, TokenHints())
    done = subprocess.run([str(project / "build" / f"{token_set.name}_run"), input_path,
                           "--scheme", "auto", "--json"], capture_output=True, text=True,
                          env=runner_environment())
    if done.returncode != 0:
        raise UsageError(done.stderr.strip() or f"the runner of '{token_set.name}' failed")
    payload = json.loads(done.stdout)
    return payload["scheme"], payload["reason"]


def compile_token_project(token_set: CompiledTokenSet, file: str, folder: Path,
                          python: bool, sample: bytes | None, no_build: bool) -> None:
    files = token_project_files(token_set, file, token_hints(token_set, sample), python)
    if no_build:
        write_tree(folder, files)
    else:
        build_tree(files, folder, cmake_arguments(python))
