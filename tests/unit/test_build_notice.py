"""A build that `coconetc` waits for is one line on stderr: what it compiles, then how long
it took, or that it failed (toolchain/cmake.py's BUILD_NOTICE); without a listener builds
are silent. A one-file CMake project keeps it quick."""

from __future__ import annotations

import re

import pytest

from parafuse.emitters.toolchain.cmake import BUILD_NOTICE, BuildError, Toolchain, build_tree
from tests.required_tools import require_cxx

ARGS = Toolchain.current().cmake_args(mpi=False)
CMAKE = "cmake_minimum_required(VERSION 3.18)\nproject(tiny CXX)\nadd_executable(tiny t.cpp)\n"


def _build(tmp_path, source: str, heard: list[tuple[str, bool]]) -> None:
    require_cxx()
    token = BUILD_NOTICE.set(lambda text, final: heard.append((text, final)))
    try:
        build_tree({"CMakeLists.txt": CMAKE, "t.cpp": source}, tmp_path / "tiny", ARGS)
    finally:
        BUILD_NOTICE.reset(token)


def test_a_build_says_what_it_compiles_and_how_long_it_took(tmp_path) -> None:
    heard: list[tuple[str, bool]] = []
    _build(tmp_path, "int main() { return 0; }\n", heard)
    (start, start_final), (end, end_final) = heard
    assert start == f"compiling {tmp_path / 'tiny'} (C++ with CMake and Ninja) ..."
    assert not start_final and end_final
    assert re.fullmatch(r" done in \d+\.\d s", end), end


def test_a_failed_build_says_so_and_raises(tmp_path) -> None:
    heard: list[tuple[str, bool]] = []
    with pytest.raises(BuildError, match="build failed") as failed:
        _build(tmp_path, "int main() { return }\n", heard)
    log = tmp_path / "tiny" / "build" / "build.log"
    assert f"(the whole log: {log}; the project is kept for a look)" in str(failed.value)
    assert "error" in log.read_text() and (tmp_path / "tiny" / "t.cpp").is_file()
    assert [final for _, final in heard] == [False, True] and heard[1][0] == " failed"


def test_without_a_listener_builds_are_silent(tmp_path, capsys) -> None:
    require_cxx()
    build_tree({"CMakeLists.txt": CMAKE, "t.cpp": "int main() {}\n"}, tmp_path / "t", ARGS)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
