"""Shared fixtures: golden files, repository paths, environment for MPI and OpenMP."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")


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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `slow` first, so that under pytest-xdist the longest ones start at
    once on both workers instead of leaving one worker alone at the end."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
