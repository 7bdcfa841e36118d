"""Every kind of .fsm and regex error: exit code 1 and the golden message, line, column
and carets. Files named `warn_*.fsm` hold warnings only: exit code 0, golden stderr."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from parafuse.cli.boostfsm import main
from tests.conftest import REPO

CASES = sorted((Path(__file__).parent / "fsm").glob("*.fsm"))


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_fsm_diagnostic_is_located_and_golden(case: Path, golden, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    relative = case.relative_to(REPO).as_posix()
    result = CliRunner().invoke(main, ["check", relative], catch_exceptions=False)
    assert result.exit_code == (0 if case.stem.startswith("warn_") else 1)
    assert "Traceback" not in result.output
    assert "internal error" not in result.stderr
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"{relative}:"), first
    golden.check(f"diagnostics/fsm/{case.stem}.err", f"boostfsm check {relative}",
                 result.stderr)


def test_missing_input_is_one_clear_line(monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(main, ["run", "samples/div7.fsm", "no/such/input",
                                       "--backend", "reference"], catch_exceptions=False)
    assert result.exit_code == 1
    assert result.stderr.strip() == ("boostfsm: error: cannot read input 'no/such/input': "
                                     "No such file or directory")
