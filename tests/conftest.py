"""Shared fixtures: golden files, repository paths, environment for MPI and OpenMP."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
# The sizes samples run at in tests: none divisible by 2, 3 or 4 ranks.
SAMPLE_SIZES = {"N": 1021, "B": 7, "K": 13, "H": 11, "D": 11, "F": 13, "G": 9, "T": 7, "E": 5}

os.environ.setdefault("OMP_NUM_THREADS", "1")
# OpenMP threads that wait sleep at once instead of spinning: two test workers on two
# cores run 2- and 3-thread configurations side by side, where spinning waiters took
# the cores from the threads they waited for (the FSM property tests ran in half the
# CPU time once they stopped spinning).
os.environ.setdefault("OMP_WAIT_POLICY", "passive")
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
# Tests check what generated projects compute, not how fast: -O1 compiles them in about
# three quarters of -O3's time (tests/e2e/test_optimisation_levels.py checks the levels).
os.environ.setdefault("PARAFUSE_OPTIMIZE", "-O1")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite golden files from the current output instead of comparing")


class Golden:
    """Compare text against `tests/<path>`; the file's first line is the command that made it."""

    def __init__(self, update: bool) -> None:
        self.update = update

    def check(self, relative_path: str, command: str, actual: str) -> None:
        path = REPO / "tests" / relative_path
        content = f"# command: {command}\n{actual.rstrip()}\n"
        if self.update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)
            return
        if not path.exists():
            pytest.fail(f"golden file {path} is missing; run pytest --update-golden to create it")
        expected = path.read_text()
        assert content == expected, f"output differs from golden file {relative_path}"


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Golden:
    return Golden(request.config.getoption("--update-golden"))


@pytest.fixture
def repo() -> Path:
    return REPO


def small_filesystem(folder: Path, options: str) -> Iterator[Path]:
    """A tmpfs mounted on `folder` with `options` for the test, unmounted after. Mounting
    needs root, as on the test machines; elsewhere the test is skipped, saying why."""
    folder.mkdir(exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@pytest.fixture
def full_disk(tmp_path) -> Iterator[Path]:
    """A folder on a 12 KiB tmpfs (three pages): room for a few small files, not for a
    step's outputs or a project."""
    yield from small_filesystem(tmp_path / "full", "size=12k")


@pytest.fixture
def read_only_folder(tmp_path) -> Iterator[Path]:
    """An empty folder on a read-only file system."""
    yield from small_filesystem(tmp_path / "read-only", "ro,size=64k")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `slow` first, so that under pytest-xdist the longest ones start at
    once on both workers instead of leaving one worker alone at the end."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
