"""Token sets on the GPU (cpp_runtime/fsm/cuda/token_*.cuh) on the emulated device give the
reference tokenizer's tokens and counts, as the CPU schemes do (test_fsm_cpp_tokens.py): the
sample lexers on empty, one-byte, random and real inputs, inputs made hard for parallel
tokenizing (boundaries inside comments, strings and long tokens, inputs that never fall in
step, inputs that back up at every byte), generated token sets; chunk counts 1, 2, 7, 64 and
more than the input's bytes (a boundary after every byte); inputs in host memory (whole,
and in pieces) and in device memory; a thread past its budget of re-read bytes. The driver
also compiles with nvcc (test_fsm_cuda_schemes.py)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from parafuse.emitters.fsm.cuda_driver import cuda_token_driver
from parafuse.emitters.fsm.token_blob import TokenHints, token_blob
from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.fsm_compiler.tokens.reference_tokenizer import kind_counts, tokenize
from parafuse.grammar.diagnostics import SourceFile

from .fsm_token_driver import configurations, sample_cases, write_manifest
from .fsm_token_strategies import compiled_cases, token_set_cases
from .test_fsm_cpp_tokens import hard_inputs, lexer_token_sets

GPU_SCHEMES = ("seq", "spec", "auto")
WORDS = """
tokens words {
    skip ws /[ ]+/
    word    /[a-z]+/
    number  /[0-9]+/
}
"""


def gpu_runs(cases, work: Path, *flags: str, env: dict | None = None) -> list[list[dict]]:
    """Every case under every GPU configuration; each run's tokens, counts and counts-only
    counts are checked equal to the reference tokenizer's. Returns the runs per case."""
    manifest = write_manifest(cases, work)
    longest = max(len(data) for _, data in cases)
    done = subprocess.run([str(cuda_token_driver()), str(manifest), *flags,
                           *configurations(longest, (1,), GPU_SCHEMES)],
                          capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr
    results = [json.loads(line)["runs"] for line in done.stdout.splitlines()]
    assert len(results) == len(cases)
    for (token_set, data), runs in zip(cases, results, strict=True):
        expected = tokenize(token_set, data)
        counts = list(kind_counts(token_set, expected).values())
        for run in runs:
            where = f"{token_set.name} {run['config']} on {data[:60]!r}: {run['reason']}"
            got = [(kind, start, end) for start, end, kind in run["tokens"]]
            assert got == expected, where
            assert run["counts"] == counts and run["counted"] == counts, where
            assert run["scheme"] in ("seq", "spec"), where
    return results


def test_samples_every_gpu_scheme_equals_reference(tmp_path) -> None:
    gpu_runs(sample_cases(), tmp_path)


def test_samples_in_device_memory_with_late_streams(tmp_path) -> None:
    """run_device's path, every stream late (PF_EMU_LAZY=all): a result read before its
    stream is waited for reads stale memory."""
    gpu_runs(sample_cases(), tmp_path, "--on-device", env={**os.environ, "PF_EMU_LAZY": "all"})


def test_hard_inputs_every_gpu_scheme_equals_reference(tmp_path) -> None:
    token_sets = lexer_token_sets()
    results = gpu_runs([(token_sets[name], data) for name, data in hard_inputs()], tmp_path)
    reasons = [run["reason"] for runs in results for run in runs if run["scheme"] == "spec"]
    assert any("tokenized in order" in reason for reason in reasons)


def test_a_thread_past_its_budget_leaves_the_input_to_the_host(tmp_path) -> None:
    """An unclosed comment re-read from every `/*` in it: with a budget of 64 bytes a thread,
    the device's result is void and the host tokenizes, as the reason says. A token set
    whose rules all close has no budget."""
    unclosed = (lexer_token_sets()["lexer"], b"x /*" + b"/* a " * 60)
    words = compile_file(SourceFile("w.fsm", WORDS)).machines[0]
    closed = (words, b"ab 12 " * 60 + b"x" * 300)
    [runs, closed_runs] = gpu_runs([unclosed, closed], tmp_path, "--reread-bytes", "64")
    reasons = [run[key] for run in runs for key in ("reason", "listed_reason")]
    assert all("tokenized on the host" in reason for reason in reasons)
    assert not any("tokenized on the host" in run["reason"] + run["listed_reason"]
                   for run in closed_runs)


def test_schemes_the_gpu_does_not_run_are_refused_in_one_line(tmp_path) -> None:
    token_set = lexer_token_sets()["lexer"]
    manifest = tmp_path / "manifest.txt"
    (tmp_path / "t.blob").write_bytes(token_blob(token_set, TokenHints()))
    (tmp_path / "t.input").write_bytes(b"if x")
    manifest.write_text(f"{tmp_path / 't.blob'} {tmp_path / 't.input'}\n")
    for scheme in ("enum", "hspec", "fused"):
        done = subprocess.run([str(cuda_token_driver()), str(manifest), f"{scheme}:1:4"],
                              capture_output=True, text=True, timeout=60)
        assert (done.returncode, done.stdout) == (1, "")
        assert done.stderr == (f"fsm_cuda_token_driver: error: scheme '{scheme}' does not run "
                               "a token set on the GPU (seq, spec, auto)\n")


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(token_set_cases)
def test_random_token_sets_on_the_gpu(tmp_path, generated) -> None:
    cases = compiled_cases(generated)
    if cases:
        gpu_runs(cases, tmp_path)



@pytest.mark.parametrize("lazy", ["none", "all"])
def test_inputs_in_pieces_equal_reference(lazy: str, tmp_path) -> None:
    """Host inputs in pieces of 700 bytes (1 GiB by default): a piece ends before the first
    token whose scan reached its end, and the next starts there. PF_EMU_LAZY=all runs a
    stream's work only when something waits for it."""
    env = {**os.environ, "PARAFUSE_FSM_GPU_PIECE_BYTES": "700", "PF_EMU_LAZY": lazy}
    lexer = lexer_token_sets()["lexer"]
    long_tokens = [(lexer, b"ab " + b"x" * 2000 + b" /* " + b"c" * 1500 + b" */ q"),
                   (lexer, b"x /*" + b"/* a " * 400)]  # tokens past a piece: it grows
    # chunks guessed inside a string see its closing quote open one, which reads to the
    # piece's end where the true tokens are short
    quoted = [(lexer_token_sets()["backs_up"], b'"' + b"a" * 200 + b'"' + b" ab" * 600)]
    results = gpu_runs(sample_cases() + long_tokens + quoted, tmp_path, env=env)
    reasons = [run["reason"] for runs in results for run in runs]
    assert any(reason.endswith(" pieces") for reason in reasons), reasons
    assert any("a piece grew to " in reason for reason in reasons), reasons
