"""The README's tour runs as written: every `$ command` succeeds (or fails where it shows an
error), and blocks marked `<!-- tour: exact -->` print what the README shows, exactly but
for what differs from run to run (`as_compared`): each time (a step's median and minimum,
a machine's seconds) is replaced by T in both texts, and a build's notice line, printed
only when the command compiles rather than finding its build in the cache, is dropped from
both. Counts, bytes, names and everything else are compared as they are. A block whose
output depends on the CPU (a scheme `auto` picks by timing, a throughput) is not marked."""

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
BUILD_NOTICE = re.compile(r"^(coconetc|boostfsm): compiling .*\n?", re.M)
TIMES = [(re.compile(r"median \d+\.\d+ ms"), "median T ms"),
         (re.compile(r'"(median_ms|min_ms)": [0-9.e+-]+'), r'"\1": T'),
         (re.compile(r"\(\d+\.\d+ s, "), "(T s, ")]


def as_compared(text: str) -> str:
    """`text` without build notices, its times replaced by T."""
    text = BUILD_NOTICE.sub("", text)
    for pattern, replacement in TIMES:
        text = pattern.sub(replacement, text)
    return text.rstrip()


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
        assert as_compared(result.stdout + result.stderr) == as_compared(shown)
    shutil.rmtree(work / "out", ignore_errors=True)


def test_readme_has_a_tour() -> None:
    assert len(STEPS) >= 3


def test_only_times_and_build_notices_are_masked() -> None:
    shown = ('median 241.503 ms, 3000009 bytes\n{"median_ms": 0.419606, "bytes_per_rank": 40}\n'
             "div7: 13 bytes, final state r0 (0.000 s, seq, 2 threads)\n")
    other_run = ("coconetc: compiling adam (C++ with CMake and Ninja) ... done in 9.1 s\n"
                 + shown.replace("241.503", "7.25").replace("0.419606", "3.5")
                 .replace("0.000", "0.012"))
    assert as_compared(other_run) == as_compared(shown)
    for old, new in (("3000009", "3000010"), (": 40", ": 41"), ("r0", "r1"), ("2 thr", "1 thr")):
        assert as_compared(shown.replace(old, new)) != as_compared(shown), new
