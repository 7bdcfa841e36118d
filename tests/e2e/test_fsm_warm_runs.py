"""A warm `boostfsm run --backend cpp` (cli/fsm_warm_runs.py): the second run of the same
file and options starts the runner built by the first without compiling the file again,
prints the compile's warnings again, and gives the same output; another byte in the file,
or a runner gone from the cache, compiles again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from parafuse.cli import boostfsm
from parafuse.cli.fsm_warm_runs import indexed_runner, warm_key
from tests.conftest import REPO

MACHINE = (REPO / "tests/diagnostics/fsm/warn_unreachable_state.fsm").read_text()
WARNING = "warning: state 'orphan' is unreachable from start state 'a' and is dropped"


def _run(source: Path, data: Path, capfd) -> tuple[int, str, str]:
    result = CliRunner().invoke(boostfsm.main, ["run", str(source), str(data), "--json"],
                                catch_exceptions=False)
    out, err = capfd.readouterr()  # the runner writes to the process's own descriptors
    return result.exit_code, out + result.stdout, err + result.stderr


@pytest.fixture
def files(tmp_path, monkeypatch) -> tuple[Path, Path]:
    monkeypatch.setenv("PARAFUSE_CACHE", str(tmp_path / "cache"))
    source, data = tmp_path / "m.fsm", tmp_path / "in.txt"
    source.write_text(MACHINE)
    data.write_bytes(b"xyxyzx" * 50)
    return source, data


def test_a_warm_run_does_not_compile_and_says_the_same(files, monkeypatch, capfd) -> None:
    source, data = files
    code, first, warned = _run(source, data, capfd)
    assert code == 0 and WARNING in warned, warned
    assert json.loads(first)["counts"]["hit"] > 0

    def compile_again(*args, **kwargs):
        raise AssertionError("the file was compiled again")
    monkeypatch.setattr(boostfsm, "compile_machines", compile_again)
    code, second, warned = _run(source, data, capfd)
    assert code == 0 and WARNING in warned, warned
    assert json.loads(second)["counts"] == json.loads(first)["counts"]


def test_another_file_or_a_lost_runner_compiles_again(files, capfd) -> None:
    source, data = files
    assert _run(source, data, capfd)[0] == 0
    key = warm_key(str(source), None, {})
    runner, _ = indexed_runner(key)
    source.write_text(MACHINE + "# one more line\n")
    assert warm_key(str(source), None, {}) != key
    assert warm_key(str(source), None, {"lookback": 8}) != warm_key(str(source), None, {})
    shutil.rmtree(runner.parent.parent)  # the cached project of the first file
    assert indexed_runner(key) is None
    code, out, _ = _run(source, data, capfd)
    assert code == 0 and json.loads(out)["counts"]["hit"] > 0
    assert indexed_runner(warm_key(str(source), None, {})) is not None
