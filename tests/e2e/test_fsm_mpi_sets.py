"""Pattern sets of several engines under `mpirun -n R` (R = 1..4): each rank runs its own
byte range (DFA engines as machines across ranks, the bounded NFA from lookback), and rank
0 prints the one-process JSON plus `ranks`, with multi-byte matches placed across every
rank boundary, a `\\b` report at the end of the input, inputs shorter than R and empty; a
set with an unbounded NFA engine is refused with one line at R > 1. The set is the one of
test_fsm_engine_set_project (same cached build)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from parafuse.emitters.fsm.project import cached_project, has_mpi
from parafuse.emitters.toolchain.mpirun import run_ranks
from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import SourceFile
from tests.e2e.fsm_mpi_embedding import build_mpi_app
from tests.e2e.test_fsm_engine_set_project import SOURCE, boostfsm
from tests.e2e.test_fsm_mpi import defined_symbols
from tests.property.fsm_cpp_driver import project_request
from tests.required_tools import require_cxx, require_tool

COMPARED = ("machine", "bytes", "final_state", "counts", "matches", "scheme", "threads")
UNBOUNDED = """options { max_states 40 }
patterns tags {
    word  /first/
    open  /<[^>]*>.{5}!/
}
"""


def built(folder: Path, name: str, source: str, python: bool) -> Path:
    require_cxx()
    require_tool(has_mpi(), "needs Open MPI (mpicxx, mpirun)")
    path = folder / f"{name}.fsm"
    path.write_text(source)
    machine = compile_file(SourceFile(str(path), source)).machines[0]
    # named without its folder, so that every test here and test_fsm_engine_set_project
    # share one cached build (with M::M_mpi)
    return cached_project(project_request(machine, path.name, python=python), mpi=True)


def straddling_input(size: int = 12_000) -> bytes:
    """Filler with matches of every pattern, 3 to 11 bytes long, across the rank
    boundaries of R = 2, 3, 4."""
    data = bytearray(b"zz zz z\n" * (size // 8))
    for boundary in (size // 2, size // 4, 3 * size // 4):
        data[boundary - 5:boundary + 7] = b"Tom---river "
    for boundary in (size // 3, 2 * size // 3):
        data[boundary - 3:boundary + 17] = b" second b123456y acx"
    return bytes(data) + b"THIRD a123y river--Tom\nfirst secXnd"  # ends in a `\b` report


def one_process(project: Path, name: str, args: list[str]) -> dict:
    done = subprocess.run([str(project / "build" / f"{name}_run"), *args], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_engine_set_ranks_equal_one_process(tmp_path) -> None:
    project = built(tmp_path, "words", SOURCE, python=True)
    inputs = {"straddling": straddling_input(), "shorter than the ranks": b"fi",
              "empty": b""}
    for label, data in inputs.items():
        path = tmp_path / "input.txt"
        path.write_bytes(data)
        configs = [["--scheme", "seq", "--matches"], ["--scheme", "enum", "--threads", "2"],
                   ["--scheme", "auto", "--threads", "2", "--matches"]]
        for options in configs if label == "straddling" else configs[:1]:
            args = [str(path), "--json", *options]
            expected = one_process(project, "words", args)
            if label == "straddling" and "--matches" in options:
                reference = json.loads(boostfsm("run", str(tmp_path / "words.fsm"), str(path),
                                                "--backend", "reference", "--matches",
                                                "--json").stdout)
                assert expected["matches"] == reference["matches"]
                assert expected["counts"] == reference["counts"]
            for ranks in (1, 2, 3, 4) if options == configs[0] else (2, 4):
                done = run_ranks(project, "words", ranks, args)
                assert done.returncode == 0, done.stderr
                got = json.loads(done.stdout)
                assert got["ranks"] == ranks
                assert {key: got.get(key) for key in COMPARED} == \
                    {key: expected.get(key) for key in COMPARED}, (label, options, ranks)
                assert f"{ranks} ranks, each over its own byte range" in got["reason"]
                assert "each rank starts exactly from that much lookback" in got["reason"]


@pytest.mark.slow
def test_unbounded_nfa_engine_is_refused_with_one_line(tmp_path) -> None:
    project = built(tmp_path, "tags", UNBOUNDED, python=False)
    path = tmp_path / "input.txt"
    path.write_bytes(b"first <a>12345! " * 100)
    alone = run_ranks(project, "tags", 1, [str(path), "--json"])
    assert alone.returncode == 0, alone.stderr
    expected = one_process(project, "tags", [str(path), "--json"])
    assert json.loads(alone.stdout)["counts"] == expected["counts"]
    done = run_ranks(project, "tags", 2, [str(path), "--json"])
    lines = done.stderr.strip().splitlines()
    assert done.returncode != 0 and done.stdout == ""
    assert len(lines) == 1 and "unbounded matches" in lines[0] and "one process" in lines[0], lines


def test_installed_mpi_target_is_found_with_find_package(tmp_path) -> None:
    """`cmake --install` installs M::M_mpi; find_package(M CONFIG) finds it and MPI."""
    project = built(tmp_path, "words", SOURCE, python=True)
    path = tmp_path / "input.txt"
    path.write_bytes(straddling_input())
    expected = one_process(project, "words", [str(path), "--json"])["counts"]
    assert all(expected.values())
    assert build_mpi_app(project, "words", tmp_path, path) == list(expected.values())


def test_a_pattern_sets_library_is_compiled_for_its_engines_entry_widths(tmp_path) -> None:
    """words' DFA engines have 1- and 2-byte entries, tags' 1-byte ones alone: M::M compiles
    the schemes for those widths only (fsm/sets/entry_widths.hpp), M::M_mpi for none."""
    words = built(tmp_path, "words", SOURCE, python=True) / "build"
    library = defined_symbols(words / "libwords.a")
    assert "run_typed<unsigned char>" in library and "run_typed<unsigned short>" in library
    assert "run_typed<unsigned int>" not in library
    assert "run_typed<" not in defined_symbols(words / "libwords_mpi.a")
    tags = defined_symbols(built(tmp_path, "tags", UNBOUNDED, python=False) / "build" / "libtags.a")
    assert "run_typed<unsigned char>" in tags and "run_typed<unsigned short>" not in tags
