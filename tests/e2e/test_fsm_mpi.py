"""The runner under `mpirun -n R` (R = 1..4) prints the one-process JSON plus `ranks`: the
permutation machine (speculation across ranks fails at every boundary, so every round
re-runs ranks; `enum` and `auto` combine the ranks' transfer functions instead, with and
without matches) over inputs that split matches between ranks, shorter than R, and empty;
a file one rank cannot read stops every rank with one line; `boostfsm analyze --input`
reports the runner's own `auto` choice. One built project (the content cache)."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from parafuse.emitters.fsm.project import cached_project, has_mpi
from parafuse.emitters.toolchain.cmake import Toolchain
from parafuse.emitters.toolchain.mpirun import (
    LAUNCHER_BLOCK,
    LAUNCHER_LINE,
    launch_environment,
    run_bounded,
    run_ranks,
)
from parafuse.fsm_compiler.pipeline import compile_file, random_sample
from parafuse.grammar.diagnostics import SourceFile
from tests.property.fsm_cpp_driver import project_request
from tests.property.test_fsm_simd_enum import permutation12_source
from tests.required_tools import require_cxx, require_tool

TIMING_KEYS = ("seconds", "gbps", "reason", "ranks")


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> tuple[Path, Path]:
    """(project folder, the .fsm file) of the permutation machine, built with MPI."""
    require_cxx()
    require_tool(has_mpi(), "needs Open MPI (mpicxx, mpirun)")
    source = tmp_path_factory.mktemp("perm12") / "perm12.fsm"
    source.write_text(permutation12_source())
    machine = compile_file(SourceFile("perm12.fsm", source.read_text())).machines[0]
    return cached_project(project_request(machine, source.name), mpi=True), source


def one_process(project: Path, args: list[str]) -> dict:
    done = subprocess.run([str(project / "build" / "perm12_run"), *args], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def without_timing(result: dict) -> dict:
    return {key: value for key, value in result.items() if key not in TIMING_KEYS}


def test_every_rank_count_equals_one_process(project, tmp_path) -> None:
    folder, _ = project
    rng = random.Random(4)
    inputs = {"text": bytes(rng.choice(b"abcXYZ0123 .,\n") for _ in range(200_000)),
              "shorter than the ranks": b"a1", "empty": b""}
    for label, data in inputs.items():
        path = tmp_path / "input.txt"
        path.write_bytes(data)
        schemes = [["--scheme", "seq", "--matches"],
                   ["--scheme", "enum", "--threads", "2", "--matches"],
                   ["--scheme", "enum", "--threads", "2"], ["--scheme", "auto"]]
        for options in schemes if label == "text" else schemes[:3]:
            args = [str(path), "--json", *options]
            expected = without_timing(one_process(folder, args))
            for ranks in (1, 2, 3, 4):
                done = run_ranks(folder, "perm12", ranks, args)
                assert done.returncode == 0, done.stderr
                got = json.loads(done.stdout)
                assert got["ranks"] == ranks, (label, ranks)
                same = without_timing(got)
                if options[1] == "auto":  # the ranks may run another scheme than one process
                    same["scheme"] = expected["scheme"]
                assert same == expected, (label, options, ranks)
                assert f"{ranks} ranks, each over its own byte range" in got["reason"]
                combined = "the ranks combined their transfer functions" in got["reason"]
                scan = options[1] == "enum" or (options[1] == "auto" and ranks > 1)
                assert combined == scan, (options, ranks, got["reason"])


def test_a_rank_that_cannot_read_stops_every_rank_with_one_line(project, tmp_path) -> None:
    folder, _ = project
    good = tmp_path / "good.txt"
    good.write_bytes(b"abc123" * 1000)
    runner = str(folder / "build" / "perm12_run")
    command = [Toolchain.current().tool("mpirun"), "--oversubscribe", "-np", "2", runner,
               str(good), "--json", ":", "-np", "1", runner, str(tmp_path / "missing.txt"),
               "--json"]  # rank 2 alone is given a file that does not exist
    done = run_bounded(command, launch_environment(3))
    stderr = LAUNCHER_LINE.sub("", LAUNCHER_BLOCK.sub("", done.stderr)).strip().splitlines()
    assert done.returncode != 0 and done.stdout == ""
    assert len(stderr) == 1 and "rank 2: cannot read input" in stderr[0], stderr


@pytest.mark.parametrize("args", [["--threads", "9999"], []])
def test_a_usage_error_under_mpirun_is_one_line(project, tmp_path, args) -> None:
    """Found by every rank before MPI starts (a bad option, a missing INPUT): rank 0 alone
    prints it and exits 2 (3 ranks printed up to 3 lines); the other ranks leave quietly, so
    the launcher, which stops the job at the first rank that fails, never stops rank 0
    before its line is out (a missing INPUT under load printed nothing)."""
    folder, _ = project
    good = tmp_path / "good.txt"
    good.write_bytes(b"abc123" * 100)
    runner = str(folder / "build" / "perm12_run")
    command = [Toolchain.current().tool("mpirun"), "--oversubscribe", "-np", "3", runner,
               *([str(good)] if args else []), *args]
    done = run_bounded(command, launch_environment(3))
    stderr = LAUNCHER_LINE.sub("", LAUNCHER_BLOCK.sub("", done.stderr)).strip().splitlines()
    assert done.returncode == 2 and done.stdout == "", done.returncode
    assert len(stderr) == 1 and stderr[0].startswith("perm12_run: error: "), stderr


@pytest.mark.parametrize("given", [True, False], ids=["input", "no-input"])
def test_analyze_reports_the_runners_choice(project, tmp_path, given) -> None:
    """`auto` has one implementation, the runtime's: `analyze` reports what the machine's
    runner picks on the sample, the --input file or (without one) the seeded random bytes
    it analyses."""
    folder, source = project
    path = tmp_path / "input.txt"
    path.write_bytes(bytes(random.Random(5).choice(b"abc012 \n") for _ in range(100_000))
                     if given else random_sample())
    boostfsm = Path(sys.executable).parent / "boostfsm"

    def timings_masked(reason: str) -> str:  # auto's timed kernels differ from run to run
        return re.sub(r"[0-9.]+ GB/s", "R GB/s", reason)

    def analysed() -> tuple[str, str]:
        done = subprocess.run([str(boostfsm), "analyze", source.name, "--json"]
                              + (["--input", str(path)] if given else []),
                              capture_output=True, text=True, timeout=600, cwd=source.parent)
        assert done.returncode == 0, done.stderr
        (analysis,) = json.loads(done.stdout)
        return analysis["auto_scheme"], timings_masked(analysis["auto_reason"])
    # Two schemes can measure within a few percent of each other (or a busy machine can
    # slow one kernel's timing), so one run may pick the other: an analysis must be one of
    # the outcomes a few runner runs give (at most 3 analyses, 3 runner runs each).
    reports, outcomes = [], []
    for _ in range(3):
        reports.append(analysed())
        for _ in range(3):
            if reports[-1] in outcomes:
                return
            runner = one_process(folder, [str(path), "--json"])
            outcomes.append((runner["scheme"], timings_masked(runner["reason"])))
        if reports[-1] in outcomes:
            return
    raise AssertionError((reports, outcomes))


def defined_symbols(library: Path) -> str:
    """The demangled names a static library defines (nm)."""
    nm = shutil.which("nm")
    require_tool(nm is not None, "needs nm (binutils)")
    done = subprocess.run([nm, "-C", "--defined-only", str(library)], capture_output=True,
                          text=True, check=True)
    return done.stdout


def symbols_by_object(library: Path) -> dict[str, str]:
    """The names each object of a static library defines."""
    objects: dict[str, str] = {}
    for block in defined_symbols(library).split("\n\n"):
        name, _, names = block.strip().partition(":\n")
        objects[name] = names
    return objects


def test_the_runtime_is_compiled_once_for_the_machines_entry_width(project) -> None:
    """M::M compiles the schemes for its blob's entry width alone, in src/runtime/schemes.cpp,
    its SIMD kernels in src/runtime/simd*.cpp (all built in parallel with src/M.cpp, which
    compiles neither), and M::M_mpi calls them through M's table of functions
    (fsm/mpi/rank_kernels.hpp) instead of compiling them again."""
    folder, _ = project
    library = defined_symbols(folder / "build" / "libperm12.a")
    assert "run_typed<unsigned char>" in library
    assert "run_typed<unsigned short>" not in library and "run_typed<unsigned int>" not in library
    objects = symbols_by_object(folder / "build" / "libperm12.a")
    assert "run_typed<unsigned char>" in objects["schemes.cpp.o"]
    # the kernels of its plans alone: 12 states counting its 1 group or none
    assert "simd_summarize_fit<16, 1>" in objects["simd.cpp.o"]
    assert "simd_run_avx2_pairs<2, 1>" in objects["simd.cpp.o"]
    for other in ("simd_run_avx2_pairs<2, 2>", "simd_run_avx2_pairs_nibbles", "simd_run_wide",
                  "simd_run_avx2<2, 1, 2, 1>", "simd_summarize_fit<0, -1>"):
        assert other not in objects["simd.cpp.o"], other
    for unit in ("simd_summarize", "simd_run", "run_typed"):
        assert unit not in objects["perm12.cpp.o"], unit
    assert "simd_" not in objects.get("simd_vbmi.cpp.o", "")  # no VBMI kernels for 12
    mpi_library = defined_symbols(folder / "build" / "libperm12_mpi.a")
    assert "run_machine_part" in mpi_library
    for scheme_code in ("run_typed<", "Engine<", "simd_summarize", "summarize_range("):
        assert scheme_code not in mpi_library, scheme_code


def test_a_machine_past_64_states_equals_one_process_at_every_rank_count(tmp_path_factory,
                                                                        tmp_path) -> None:
    """A 100-state permutation machine: on AVX-512 VBMI the ranks summarise their ranges
    with the wide kernels (vpermi2b), elsewhere they speculate; either way each rank count
    gives the one-process result."""
    require_cxx()
    require_tool(has_mpi(), "needs Open MPI (mpicxx, mpirun)")
    from permutation import permutation_source

    source = permutation_source(100)
    machine = compile_file(SourceFile("perm100.fsm", source)).machines[0]
    folder = cached_project(project_request(machine, "perm100.fsm"), mpi=True)
    rng = random.Random(5)
    path = tmp_path / "input.txt"
    path.write_bytes(bytes(rng.choice(b"abcXYZ0123 .,\n") for _ in range(150_001)))
    for options in (["--scheme", "enum", "--threads", "2"], ["--scheme", "enum", "--matches"]):
        args = [str(path), "--json", *options]
        done = subprocess.run([str(folder / "build" / "perm100_run"), *args],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        expected = without_timing(json.loads(done.stdout))
        for ranks in (1, 2, 3):
            ran = run_ranks(folder, "perm100", ranks, args)
            assert ran.returncode == 0, ran.stderr
            assert without_timing(json.loads(ran.stdout)) == expected, (options, ranks)
