"""Every precondition of every schedule directive: a located error at the directive."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from parafuse.cli.coconetc import main
from tests.conftest import REPO

CASES = sorted((Path(__file__).parent / "ccn_schedules").glob("*.ccn"))


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_rejected_directive_is_located(case: Path, golden) -> None:
    relative = case.relative_to(REPO).as_posix()
    result = CliRunner().invoke(main, ["check", relative], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    first = result.stderr.splitlines()[0]
    line = int(first.split(":")[1])
    schedule_line = next(i for i, text in enumerate(case.read_text().splitlines(), 1)
                         if text.startswith("schedule "))
    assert line > schedule_line, f"error is not inside the schedule: {first}"
    golden.check(f"diagnostics/ccn_schedules/{case.stem}.err", f"coconetc check {relative}",
                 result.stderr)
