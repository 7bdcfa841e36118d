"""`-o DIR` writes a project into DIR and touches nothing else there: a user's files stay
(they were deleted with the folder, the input file with them); writing the project again
replaces what parafuse wrote (its `.parafuse-project` lists it) and its build folder; a
file of the user's where the project puts one is one error, before anything is written;
new folders and files get the modes the umask gives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from parafuse.cli.boostfsm import main as boostfsm
from parafuse.cli.coconetc import main as coconetc
from parafuse.emitters.toolchain.cmake import PROJECT_MARKER, write_tree
from tests.conftest import REPO
from tests.diagnostics.test_cli_errors import one_line_error

DIV7 = REPO / "samples" / "div7.fsm"
SGD = str(REPO / "samples" / "sgd.ccn")


def compile_div7(folder: Path, source: Path = DIV7):
    return CliRunner().invoke(boostfsm, ["compile", str(source), "--no-build", "-o", str(folder)])


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def users_files(folder: Path, names: list[str]) -> dict[str, bytes]:
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(f"mine: {name}")
    return tree(folder)


def test_a_users_files_stay_beside_the_project(tmp_path) -> None:
    mine = users_files(tmp_path / "w", ["notes.txt", "sub/deep.txt", "src/mine.cpp"])
    result = compile_div7(tmp_path / "w")
    assert result.exit_code == 0, result.output
    written = tree(tmp_path / "w")
    assert {name: written[name] for name in mine} == mine
    assert "CMakeLists.txt" in written and "src/div7.cpp" in written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w"]  # no staging folder left


def test_into_the_current_folder_with_the_input_in_it(tmp_path, monkeypatch) -> None:
    source = tmp_path / "div7.fsm"
    source.write_bytes(DIV7.read_bytes())
    monkeypatch.chdir(tmp_path)
    result = compile_div7(Path("."), source)
    assert result.exit_code == 0, result.output
    assert source.read_bytes() == DIV7.read_bytes() and (tmp_path / "CMakeLists.txt").is_file()


def test_writing_again_replaces_only_what_parafuse_wrote(tmp_path) -> None:
    folder = tmp_path / "p"
    write_tree(folder, {"CMakeLists.txt": "a", "src/old.cpp": "old", "src/kept.cpp": "1"})
    (folder / "build" / "obj").mkdir(parents=True)
    (folder / "build" / "obj" / "x.o").write_text("built")
    mine = users_files(folder, ["src/mine.cpp", "notes.txt"])
    write_tree(folder, {"CMakeLists.txt": "b", "src/kept.cpp": "2", "include/new.hpp": "n"})
    after = tree(folder)
    assert {name: after[name] for name in ["src/mine.cpp", "notes.txt"]} == \
        {name: mine[name] for name in ["src/mine.cpp", "notes.txt"]}
    assert after["CMakeLists.txt"] == b"b" and after["src/kept.cpp"] == b"2"
    assert "src/old.cpp" not in after and not (folder / "build").exists()
    listed = (folder / PROJECT_MARKER).read_text().splitlines()[1:]
    assert listed == ["CMakeLists.txt", "include/new.hpp", "src/kept.cpp"]


@pytest.mark.parametrize("in_the_way", ["CMakeLists.txt", "src", "build/cache.txt"])
def test_a_users_file_where_the_project_puts_one_is_one_error(tmp_path, in_the_way) -> None:
    folder = tmp_path / "w"
    before = users_files(folder, [in_the_way, "notes.txt"])
    shown = in_the_way.split("/")[0]
    one_line_error(compile_div7(folder), "boostfsm", f"-o {folder}",
                   f"it holds '{shown}', which parafuse did not write and would overwrite")
    assert tree(folder) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w"]


def test_coconetc_build_refuses_before_building(tmp_path) -> None:
    folder = tmp_path / "b"
    before = users_files(folder, ["CMakeLists.txt"])
    result = CliRunner().invoke(coconetc, ["build", SGD, "-o", str(folder)])
    one_line_error(result, "coconetc", "it holds 'CMakeLists.txt'")
    assert tree(folder) == before


def test_new_project_folders_take_the_umask(tmp_path) -> None:
    old = os.umask(0o027)
    try:
        assert compile_div7(tmp_path / "p").exit_code == 0
        (tmp_path / "q").mkdir()
        assert compile_div7(tmp_path / "q").exit_code == 0
    finally:
        os.umask(old)
    for folder in ("p", "q"):
        assert (tmp_path / folder / "src").stat().st_mode & 0o777 == 0o750
        assert (tmp_path / folder / "CMakeLists.txt").stat().st_mode & 0o777 == 0o640
    assert (tmp_path / "p").stat().st_mode & 0o777 == 0o750


def test_a_marker_naming_paths_outside_the_folder_touches_nothing_there(tmp_path) -> None:
    """A `.parafuse-project` listing `../x`, an absolute path or a path through a symbolic
    link out of the folder: writing the project again leaves those files where they are."""
    outside = tmp_path / "outside"
    outside.mkdir()
    victims = [outside / name for name in ("up.txt", "absolute.txt", "linked.txt")]
    for victim in victims:
        victim.write_text("the user's")
    folder = tmp_path / "w"
    assert compile_div7(folder).exit_code == 0
    (folder / "link").symlink_to(outside)
    marker = folder / PROJECT_MARKER
    marker.write_text(marker.read_text() + "../outside/up.txt\n" + f"{victims[1]}\n" +
                      "link/linked.txt\n")
    result = compile_div7(folder)
    assert result.exit_code == 0, result.output
    assert [victim.read_text() for victim in victims] == ["the user's"] * 3
    assert (folder / "link").is_symlink() and (folder / "src" / "div7.cpp").is_file()
