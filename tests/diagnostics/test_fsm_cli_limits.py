"""`boostfsm`'s command line: option flags take the ranges an `options` block takes, an empty
path is one error, and a file without machines says what it may define. Each mistake is one
line, exit code 1, nothing written, no traceback."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from parafuse.cli.boostfsm import main as boostfsm
from parafuse.fsm_compiler.options import INTEGER_LIMITS, RUN_LIMITS
from tests.conftest import REPO

DIV7 = str(REPO / "samples" / "div7.fsm")
FLAGS = {"max_states": "--max-states", "max_fused_states": "--max-fused-states",
         "lookback": "--lookback"}


def one_line_error(result, *words: str) -> str:
    assert result.exit_code == 1, (result.exit_code, result.output)
    assert "Traceback" not in result.output and "internal error" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("boostfsm: error: "), lines[0]
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def invoke(tmp_path, monkeypatch):
    """Runs boostfsm in the empty folder tmp_path, where a default output would land."""
    monkeypatch.chdir(tmp_path)
    return lambda args: CliRunner().invoke(boostfsm, args)


@pytest.mark.parametrize("key", sorted(FLAGS))
@pytest.mark.parametrize("command", [["check"], ["analyze"], ["compile", "--no-build"]])
def test_flags_take_the_options_block_ranges(tmp_path, invoke, key, command) -> None:
    low, high = INTEGER_LIMITS[key]
    for bad in (high + 1, 99999999999, low - 1):
        result = invoke([command[0], DIV7, *command[1:], FLAGS[key], str(bad)])
        one_line_error(result, f"'{FLAGS[key]}'", str(bad), str(high))
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("key", sorted(FLAGS))
def test_flags_accept_the_bounds(key) -> None:
    low, high = INTEGER_LIMITS[key]
    for good in (low, high):
        result = CliRunner().invoke(boostfsm, ["check", DIV7, FLAGS[key], str(good)])
        assert result.exit_code == 0, result.output


@pytest.mark.parametrize("key", sorted(RUN_LIMITS))
def test_run_shape_past_the_runners_bounds_is_the_clis_error(invoke, monkeypatch, key) -> None:
    """`--threads 100000` exited 2 with the runner's words; now the CLI's, before a build."""
    import parafuse.cli.fsm_kinds as cli

    def no_build(*_args, **_kwargs):
        raise AssertionError("built a project for a run it must refuse")

    monkeypatch.setattr(cli, "runner_for", no_build)
    low, high = RUN_LIMITS[key]
    for bad in (high + 1, low - 1):
        result = invoke(["run", DIV7, "-", f"--{key}", str(bad)])
        one_line_error(result, f"'--{key}'", str(bad), f"{low}<=x<={high}")


def test_options_block_and_flag_agree(tmp_path) -> None:
    high = INTEGER_LIMITS["lookback"][1]
    source = tmp_path / "o.fsm"
    source.write_text(f"options {{ lookback {high + 1} }}\n" + open(DIV7).read())
    in_file = CliRunner().invoke(boostfsm, ["check", str(source)])
    assert in_file.exit_code == 1
    assert f"must be between 1 and {high}" in in_file.stderr
    on_line = CliRunner().invoke(boostfsm, ["check", DIV7, "--lookback", str(high + 1)])
    one_line_error(on_line, f"1<=x<={high}")


def test_no_machine_names_every_kind(tmp_path) -> None:
    source = tmp_path / "empty.fsm"
    source.write_text("# only a comment\noptions { scheme seq }\n")
    result = CliRunner().invoke(boostfsm, ["check", str(source)])
    assert result.exit_code == 1
    first = result.stderr.splitlines()[0]
    assert first.endswith("error: the file defines no machine, pattern set or token set"), first
    assert "'tokens NAME { ... }'" in result.stderr


@pytest.mark.parametrize("args, option", [
    (["compile", DIV7, "--no-build", "-o", ""], "-o"),
    (["compile", DIV7, "--no-build", "--train", ""], "--train"),
    (["run", DIV7, "-", "--backend", "reference", "--tokens-out", ""], "--tokens-out"),
])
def test_an_empty_path_is_one_error(tmp_path, invoke, args, option) -> None:
    result = invoke(args)
    line = one_line_error(result)
    assert line == f"boostfsm: error: {option}: an empty path"
    assert not any(tmp_path.iterdir())
