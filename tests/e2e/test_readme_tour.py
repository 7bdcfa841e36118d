"""The README's tour runs as written: every `$ command` succeeds (or fails where it shows an
error), and blocks marked `<!-- tour: exact -->` print exactly what the README shows."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

BLOCK = re.compile(r"(<!-- tour: exact -->\s*)?```console\n(.*?)```", re.S)


def tour_commands() -> list[tuple[str, str, bool]]:
    """(command, shown output, compare exactly) for every `$` line of the README."""
    steps = []
    for match in BLOCK.finditer((REPO / "README.md").read_text()):
        exact = match.group(1) is not None
        for chunk in re.split(r"^\$ ", match.group(2), flags=re.M)[1:]:
            command, _, output = chunk.partition("\n")
            steps.append((command, output, exact))
    return steps


STEPS = tour_commands()


@pytest.mark.parametrize("command,shown,exact", STEPS, ids=[s[0][:40] for s in STEPS])
def test_readme_tour_step(command: str, shown: str, exact: bool, tmp_path: Path) -> None:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    work = tmp_path / "repo"
    work.mkdir()
    for name in ("samples", "tests"):
        (work / name).symlink_to(REPO / name)
    result = subprocess.run(command, shell=True, cwd=work, env=env, text=True,
                            capture_output=True, timeout=300)
    expected_code = 1 if ": error:" in shown else 0
    assert result.returncode == expected_code, result.stderr
    if exact:
        assert (result.stdout + result.stderr).rstrip() == shown.rstrip()
    shutil.rmtree(work / "out", ignore_errors=True)


def test_readme_has_a_tour() -> None:
    assert len(STEPS) >= 3
