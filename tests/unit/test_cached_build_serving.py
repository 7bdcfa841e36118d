"""cached_build_serving: the cached build asked for; else a cached build of the same project
with more targets; else a new build of the one asked for (never of a larger one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from parafuse.emitters.fsm.project import larger_builds
from parafuse.emitters.toolchain import cmake
from parafuse.emitters.toolchain.cmake import cache_root, cached_build_serving, content_key

SMALL = ({"CMakeLists.txt": "small"}, ["-DM_MPI=OFF"])
LARGE = ({"CMakeLists.txt": "large"}, [])


@pytest.fixture
def cache(tmp_path, monkeypatch) -> list:
    """An empty cache whose builds are recorded instead of run."""
    monkeypatch.setenv("PARAFUSE_CACHE", str(tmp_path))
    built: list = []
    monkeypatch.setattr(cmake, "cached_build",
                        lambda name, files, args: built.append((files, args)) or tmp_path / "new")
    return built


def _mark_built(inputs) -> Path:
    folder = cache_root() / f"m-{content_key(*inputs)}"
    (folder / "build").mkdir(parents=True)
    (folder / "build" / ".built").write_text("")
    return folder


def test_a_new_build_is_of_the_project_asked_for(cache) -> None:
    assert cached_build_serving("m", lambda: SMALL, [lambda: LARGE]) == cache_root() / "new"
    assert cache == [SMALL]


def test_a_cached_larger_build_serves(cache) -> None:
    larger = _mark_built(LARGE)
    assert cached_build_serving("m", lambda: SMALL, [lambda: LARGE]) == larger
    assert cache == []


def test_the_build_asked_for_comes_first(cache) -> None:
    _mark_built(LARGE)
    small = _mark_built(SMALL)
    assert cached_build_serving("m", lambda: SMALL, [lambda: LARGE]) == small


def test_an_unfinished_larger_build_does_not_serve(cache) -> None:
    (cache_root() / f"m-{content_key(*LARGE)}" / "build").mkdir(parents=True)  # no .built
    assert cached_build_serving("m", lambda: SMALL, [lambda: LARGE]) == cache_root() / "new"


@pytest.mark.parametrize("mpi_found", [True, False])
@pytest.mark.parametrize("python, mpi", [(False, False), (True, False), (False, True)])
def test_larger_builds_hold_what_was_asked_for(python, mpi, mpi_found, monkeypatch) -> None:
    monkeypatch.setattr("parafuse.emitters.fsm.project.has_mpi", lambda: mpi_found)
    larger = larger_builds(python, mpi)
    largest = (True, mpi or mpi_found)
    assert largest in larger or largest == (python, mpi)
    assert (python, mpi) not in larger
    assert all(p >= python and m >= mpi for p, m in larger)
