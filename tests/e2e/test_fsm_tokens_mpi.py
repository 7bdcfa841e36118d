"""A token set's runner under `mpirun -n R` (R = 1..4): rank 0 prints the one-process JSON
(tokens included) plus `ranks`, and writes the same --tokens-out file, over C source, a
string token that spans several ranks, strings whose parity a wrong guess never
recovers (every round re-runs ranks), one unterminated comment over the whole file (the
ranks' guesses never fall in step), inputs shorter than R and empty; a file one rank
cannot read stops every rank with one line. One built project (the content cache)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from parafuse.emitters.fsm.project import has_mpi
from parafuse.emitters.fsm.token_project import TokenHints, cached_token_project
from parafuse.emitters.toolchain.cmake import Toolchain
from parafuse.emitters.toolchain.mpirun import (
    LAUNCHER_BLOCK,
    LAUNCHER_LINE,
    launch_environment,
    run_bounded,
    run_ranks,
)
from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.fsm_compiler.tokens.reference_tokenizer import tokenize
from parafuse.grammar.diagnostics import SourceFile
from tests.conftest import SAMPLES
from tests.required_tools import require_cxx, require_tool

sys.path.insert(0, str(SAMPLES / "tokens"))
import token_inputs  # noqa: E402

TIMING_KEYS = ("seconds", "gbps", "reason", "ranks")
SOURCE = SAMPLES / "tokens" / "clexer_tokens.fsm"


@pytest.fixture(scope="module")
def c_lexer():
    require_cxx()
    require_tool(has_mpi(), "needs Open MPI (mpicxx, mpirun)")
    token_set = compile_file(SourceFile(str(SOURCE), SOURCE.read_text())).machines[0]
    return token_set, cached_token_project(token_set, "clexer_tokens.fsm", TokenHints(), mpi=True)


def one_process(project: Path, args: list[str]) -> dict:
    done = subprocess.run([str(project / "build" / "clexer_tokens_run"), *args],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def without_timing(result: dict) -> dict:
    return {key: value for key, value in result.items() if key not in TIMING_KEYS}


INPUTS = {
    "C source": token_inputs.clexer_tokens(40_000),
    "a string over several ranks": b"s = \"" + b"x " * 2000 + b"\";\nint x;\n",
    "strings whose parity never falls in step": b"\"a" + b"\" \"a" * 1500 + b"\"\n",
    "one unterminated comment": b"/* " + token_inputs.clexer_tokens(12_000).replace(b"*/", b"*"),
    "shorter than the ranks": b"a1",
    "empty": b"",
}


@pytest.mark.parametrize("label", list(INPUTS))
def test_ranks_give_the_one_process_tokens(c_lexer, tmp_path, label) -> None:
    token_set, project = c_lexer
    data = INPUTS[label]
    path = tmp_path / "input.c"
    path.write_bytes(data)
    if label != "C source":  # the runner's tokens equal the reference's (the oracle)
        names = token_set.kind_names
        expected_tokens = [[start, end, names[kind]]
                           for kind, start, end in tokenize(token_set, data)]
        assert one_process(project, [str(path), "--json", "--tokens"])["tokens"] == expected_tokens
    for ranks in (1, 2, 3, 4):  # seq at odd R, hspec on 2 threads at even R
        scheme = ["--scheme", "seq"] if ranks % 2 else ["--scheme", "hspec", "--threads", "2"]
        args = [str(path), "--json", "--tokens", *scheme]
        expected = without_timing(one_process(project, args))
        out = tmp_path / f"tokens{ranks}.npy"
        done = run_ranks(project, "clexer_tokens", ranks, [*args, "--tokens-out", str(out)])
        assert done.returncode == 0, done.stderr
        got = json.loads(done.stdout)
        assert got["ranks"] == ranks, (label, ranks)
        assert without_timing(got) == expected, (label, ranks)
        assert got["reason"].startswith(f"{ranks} ranks, each over its own byte range")
        records = np.load(out)
        assert [[int(s), int(e), token_set.kind_names[k]] for s, e, k in
                zip(records["start"], records["end"], records["kind"])] == expected["tokens"]
        assert not list(tmp_path.glob("*.tmp*"))  # written under a temporary name, renamed


def test_a_rank_that_cannot_read_stops_every_rank_with_one_line(c_lexer, tmp_path) -> None:
    _, project = c_lexer
    good = tmp_path / "good.c"
    good.write_bytes(b"int x = 1;\n" * 1000)
    out = tmp_path / "tokens.npy"
    runner = str(project / "build" / "clexer_tokens_run")
    command = [Toolchain.current().tool("mpirun"), "--oversubscribe", "-np", "2", runner,
               str(good), "--json", "--tokens-out", str(out), ":", "-np", "1", runner,
               str(tmp_path / "missing.c"), "--json", "--tokens-out", str(out)]
    done = run_bounded(command, launch_environment(3))  # rank 2 alone is given a missing file
    stderr = LAUNCHER_LINE.sub("", LAUNCHER_BLOCK.sub("", done.stderr)).strip().splitlines()
    assert done.returncode != 0 and done.stdout == ""
    assert len(stderr) == 1 and "rank 2: cannot read input" in stderr[0], stderr
    assert not out.exists()


@pytest.mark.parametrize("args", [["--threads", "9999"], ["--matches"], []])
def test_a_usage_error_under_mpirun_is_one_line_with_status_2(c_lexer, tmp_path, args) -> None:
    """Found by every rank before MPI starts: rank 0 alone prints it and exits 2; the others
    leave quietly, so the launcher never stops rank 0 before its line is out."""
    _, project = c_lexer
    good = tmp_path / "good.c"
    good.write_bytes(b"int x = 1;\n" * 100)
    runner = str(project / "build" / "clexer_tokens_run")
    command = [Toolchain.current().tool("mpirun"), "--oversubscribe", "-np", "3", runner,
               *([str(good)] if args else []), *args]
    done = run_bounded(command, launch_environment(3))
    stderr = LAUNCHER_LINE.sub("", LAUNCHER_BLOCK.sub("", done.stderr)).strip().splitlines()
    assert done.returncode == 2 and done.stdout == "", done.returncode
    assert len(stderr) == 1 and stderr[0].startswith("clexer_tokens_run: error: "), stderr
