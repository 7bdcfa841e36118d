"""`-o DIR` replaces a project folder, never what a user keeps: a folder holding files that
parafuse did not write (its `.parafuse-project` lists what it wrote), or the current
folder, is one error and stays as it was; a project of its own is replaced, build folder
and all; new folders get the mode the umask gives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from parafuse.cli.boostfsm import main as boostfsm
from parafuse.cli.coconetc import main as coconetc
from parafuse.emitters.toolchain.cmake import PROJECT_MARKER
from tests.conftest import REPO
from tests.diagnostics.test_cli_errors import one_line_error

DIV7 = str(REPO / "samples" / "div7.fsm")
SGD = str(REPO / "samples" / "sgd.ccn")


def compile_div7(folder: Path):
    return CliRunner().invoke(boostfsm, ["compile", DIV7, "--no-build", "-o", str(folder)])


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


@pytest.mark.parametrize("keeps", [["notes.txt"], ["sub/deep.txt", "a.txt", "b", "c"]])
def test_a_folder_with_a_users_files_is_refused_and_kept(tmp_path, keeps) -> None:
    folder = tmp_path / "w"
    for name in keeps:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("mine")
    before = tree(folder)
    line = one_line_error(compile_div7(folder), "boostfsm", f"-o {folder}",
                          "it holds what parafuse did not write (", "choose a new or empty")
    assert ("and 1 more" in line) == (len(keeps) > 3), line
    assert tree(folder) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w"]  # no staging folder left


def test_the_current_folder_is_refused(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for given in (".", str(tmp_path.parent)):
        one_line_error(compile_div7(Path(given)), "boostfsm", "the current folder")
    assert list(tmp_path.iterdir()) == []


def test_its_own_project_is_replaced_but_not_a_file_added_to_it(tmp_path) -> None:
    folder = tmp_path / "p"
    assert compile_div7(folder).exit_code == 0
    listed = (folder / PROJECT_MARKER).read_text().splitlines()[1:]
    assert "CMakeLists.txt" in listed and all((folder / name).is_file() for name in listed)
    (folder / "build" / "obj").mkdir(parents=True)
    (folder / "build" / "obj" / "x.o").write_text("built")
    result = compile_div7(folder)
    assert result.exit_code == 0, result.output
    assert not (folder / "build").exists()
    (folder / "div7.fsm").write_text("a user's file")
    one_line_error(compile_div7(folder), "boostfsm", "(div7.fsm)")
    assert (folder / "div7.fsm").read_text() == "a user's file"


def test_coconetc_build_refuses_before_building(tmp_path) -> None:
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    result = CliRunner().invoke(coconetc, ["build", SGD, "-o", str(folder)])
    one_line_error(result, "coconetc", "(notes.txt)")
    assert tree(folder) == {"notes.txt": b"mine"}


def test_new_project_folders_take_the_umask(tmp_path) -> None:
    old = os.umask(0o027)
    try:
        assert compile_div7(tmp_path / "p").exit_code == 0
    finally:
        os.umask(old)
    assert (tmp_path / "p").stat().st_mode & 0o777 == 0o750
    assert (tmp_path / "p" / "CMakeLists.txt").stat().st_mode & 0o777 == 0o640
