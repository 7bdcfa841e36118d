"""Every kind of .ccn error: exit code 1 and the golden message, line, column and carets."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from parafuse.cli.coconetc import main
from tests.conftest import REPO

CASES = sorted((Path(__file__).parent / "ccn").glob("*.ccn"))


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_ccn_error_is_located_and_golden(case: Path, golden) -> None:
    relative = case.relative_to(REPO).as_posix()
    result = CliRunner().invoke(main, ["check", relative], catch_exceptions=False)
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"{relative}:"), first
    golden.check(f"diagnostics/ccn/{case.stem}.err", f"coconetc check {relative}",
                 result.stderr)
