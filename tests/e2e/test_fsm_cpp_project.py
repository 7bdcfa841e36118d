"""A generated .fsm project end to end: the runner's contract (JSON fields, matches,
standard input, bad input), `boostfsm run --backend cpp`, the Python module, a C++
application embedding the library (add_subdirectory and find_package), and the
schemes under AddressSanitizer + UndefinedBehaviorSanitizer."""

from __future__ import annotations

import importlib
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

from parafuse.emitters.fsm.project import cached_project, table_driver
from parafuse.emitters.fsm.simd_units import set_fits
from parafuse.emitters.toolchain.cmake import Toolchain, build
from parafuse.emitters.toolchain.optimisation import OPTIMIZE_VARIABLE
from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.fsm_compiler.reference_executor import result_json, run_reference
from parafuse.grammar.diagnostics import SourceFile
from tests.conftest import REPO, SAMPLES
from tests.property.fsm_cpp_driver import (
    assert_all_equal_reference,
    configurations,
    project_request,
)

sys.path.insert(0, str(SAMPLES))
import inputs  # noqa: E402

BOOSTFSM = str(Path(sys.executable).parent / "boostfsm")
COMPARED = ("machine", "bytes", "final_state", "counts", "matches")


def sample_machine(name: str):
    path = SAMPLES / f"{name}.fsm"
    return compile_file(SourceFile(str(path), path.read_text(encoding="latin-1"))).machines[0]


@pytest.fixture(scope="module")
def csv_project() -> Path:
    return cached_project(project_request(sample_machine("csv"), "samples/csv.fsm", python=True))


def test_cached_project_without_mpi_skips_the_mpi_library(csv_project) -> None:
    """`boostfsm run`'s cached builds pass -DC_MPI=OFF: no M::M_mpi, a runner without MPI."""
    assert (csv_project / "build" / "libcsv.a").exists()
    assert not list((csv_project / "build").glob("*csv_mpi*"))
    cache = (csv_project / "build" / "CMakeCache.txt").read_text()
    assert "csv_MPI:BOOL=OFF" in cache and "MPI_CXX_COMPILER" not in cache


@pytest.fixture(scope="module")
def csv_input(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("fsm") / "csv.txt"
    path.write_bytes(inputs.csv(300_000))
    return path


def run_runner(project: Path, *args: str, stdin: bytes | None = None):
    return subprocess.run([str(project / "build" / "csv_run"), *args], input=stdin,
                          capture_output=True, timeout=120)


def expected_json(data: bytes, matches: bool) -> dict:
    machine = sample_machine("csv")
    return result_json(machine, run_reference(machine, data, matches), len(data), 1.0, "auto")


@pytest.mark.parametrize("scheme", ["auto", "seq", "enum", "fused", "spec", "hspec"])
def test_runner_json_equals_reference(csv_project, csv_input, scheme) -> None:
    done = run_runner(csv_project, str(csv_input), "--json", "--matches", "--threads", "2",
                      "--scheme", scheme, "--repeat", "3")
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    want = expected_json(csv_input.read_bytes(), True)
    assert {k: got[k] for k in COMPARED} == {k: want[k] for k in COMPARED}
    assert set(got) == set(want)
    assert got["requested_scheme"] == scheme and got["threads"] == 2
    assert got["scheme"] in ("seq", "enum", "fused", "spec", "hspec") and got["reason"]
    assert got["seconds"] > 0 and got["gbps"] > 0


def test_runner_json_types_match_the_reference_on_empty_input(csv_project, tmp_path) -> None:
    """Every value has the reference's JSON type, also where a float is whole: `gbps` of
    an empty input is 0.0, not 0."""
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    done = run_runner(csv_project, str(empty), "--json")
    assert done.returncode == 0, done.stderr
    got, want = json.loads(done.stdout), expected_json(b"", False)
    assert {k: type(v) for k, v in got.items()} == {k: type(v) for k, v in want.items()}
    assert got["gbps"] == 0.0


def test_enum_counts_with_the_kernels_compiled_for_its_plans(csv_project, csv_input) -> None:
    """The library compiles the SIMD kernels of csv's plans alone (6 states, 2 groups:
    emitters/fsm/simd_units.py); `enum` runs them and counts both groups in its one pass,
    which it could not if the kernels were compiled for another group count (the plan
    would fall back to the scalar enumeration and say so)."""
    if platform.machine() != "x86_64":
        pytest.skip("SIMD enumeration's kernels are x86 ones")
    done = run_runner(csv_project, str(csv_input), "--json", "--scheme", "enum", "--threads", "2")
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    want = expected_json(csv_input.read_bytes(), False)
    counted = [key for key in COMPARED if key != "matches"]
    assert {k: got[k] for k in counted} == {k: want[k] for k in counted}
    assert "SIMD enumeration (" in got["reason"], got["reason"]
    assert "counting reports per start state" in got["reason"], got["reason"]


def test_runner_reads_standard_input_and_prints_text(csv_project) -> None:
    data = b'a,"b,c"\nd,e\n'
    done = run_runner(csv_project, "-", "--matches", stdin=data)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert lines[0].startswith(f"csv: {len(data)} bytes, final state end_of_record (")
    assert lines[1:] == ["  field: 2", "  record: 2", "2 field", "8 record", "10 field",
                         "12 record"]


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_runner_help_prints_the_usage_and_exits_0(csv_project, flag) -> None:
    done = run_runner(csv_project, "-", flag)
    assert done.returncode == 0 and done.stderr == b""
    assert done.stdout.decode() == ("usage: csv_run INPUT [--threads T] [--scheme auto|seq|enum|"
                                    "fused|spec|hspec] [--chunks C] [--matches] [--json] "
                                    "[--repeat K]\n")


@pytest.mark.parametrize("args,message", [
    (["no/such/file"], "cannot read input 'no/such/file': No such file or directory"),
    (["."], "cannot read input '.': it is a directory"),
    ([], "missing INPUT"),
    (["-", "--threads", "many"], "--threads needs a whole number"),
    (["-", "--threads", "4097"], "--threads needs a whole number from 0 to 4096"),
    (["-", "--chunks", "1048577"], "--chunks needs a whole number from 0 to 1048576"),
    (["-", "--chunks"], "--chunks needs a value"),
    (["-", "--frobnicate"], "unknown option '--frobnicate'"),
    (["-", "--scheme", "magic"], "unknown scheme 'magic'"),
    (["-", "--repeat", "0"], "--repeat needs a whole number from 1"),
])
def test_runner_bad_input_is_one_clear_line(csv_project, args, message) -> None:
    done = run_runner(csv_project, *args, stdin=b"x,y\n")
    assert done.returncode != 0
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("csv_run: error: ") and message in lines[0]
    assert done.stdout == b""


def test_boostfsm_run_cpp_equals_reference_backend(csv_input, csv_project) -> None:
    """`boostfsm run` finds csv_project's build (the same source name, and more: the Python
    module) and uses it."""
    results = {}
    for backend in ("cpp", "reference"):
        done = subprocess.run([BOOSTFSM, "run", "samples/csv.fsm", str(csv_input),
                               "--backend", backend, "--json", "--matches", "--threads", "2"],
                              capture_output=True, text=True, timeout=600, cwd=REPO)
        assert done.returncode == 0, done.stderr
        results[backend] = json.loads(done.stdout)
    assert {k: results["cpp"][k] for k in COMPARED} == {
        k: results["reference"][k] for k in COMPARED}


def test_python_module_reads_buffers_without_copying(csv_project, csv_input) -> None:
    standard_csv = sys.modules.pop("csv", None)  # the machine's module shares its name
    sys.path.insert(0, str(csv_project / "build"))
    try:
        module = importlib.import_module("csv")
        assert hasattr(module, "run")
    finally:
        sys.path.pop(0)
        if standard_csv is not None:
            sys.modules["csv"] = standard_csv
    data = csv_input.read_bytes()
    want = expected_json(data, True)
    for buffer in (data, bytearray(data), memoryview(data), np.frombuffer(data, np.uint8)):
        got = module.run(buffer, threads=2, scheme="auto", matches=True)
        assert got["final_state"] == want["final_state"] and got["counts"] == want["counts"]
        found = got["matches"]  # one structured array over the library's vector, 16 B each
        assert found.dtype.names == ("offset", "tag") and found.itemsize == 16, found.dtype
        assert found.base is not None and found.flags.owndata is False
        assert [[int(m["offset"]), module.tags[m["tag"]]] for m in found] == want["matches"]
    assert module.run(b"")["counts"] == {"field": 0, "record": 0}
    assert len(module.run(b"", matches=True)["matches"]) == 0
    with pytest.raises(ValueError, match="unknown scheme"):
        module.run(data, scheme="magic")
    with pytest.raises(ValueError, match="contiguous"):
        module.run(np.frombuffer(data, np.uint8)[::2])
    # a 2-D buffer is read in C order: only a C-contiguous one is taken, as documented
    square = np.frombuffer(data[:(len(data) // 2) * 2], np.uint8).reshape(2, -1)
    assert module.run(square)["bytes"] == square.size
    assert module.run(np.array(44, np.uint8))["bytes"] == 1  # 0-d
    for wrong_order in (np.asfortranarray(square), square.T, memoryview(square.T)):
        with pytest.raises(ValueError, match="C-contiguous"):
            module.run(wrong_order)
    for threads in (-1, 4097, 10**6):  # the runner's --threads bounds, in one place
        with pytest.raises(ValueError, match=f"threads must be from 0 to 4096 .*, not {threads}"):
            module.run(data, threads=threads)


APP = """\
#include <cstdio>
#include <cstring>
#include "csv.hpp"
int main() {
  const char* text = "a,\\"b,c\\"\\nd,e\\n";
  csv::Options options;
  options.scheme = "spec";
  options.threads = 2;
  options.matches = true;
  csv::Result r = csv::run(reinterpret_cast<const uint8_t*>(text), std::strlen(text), options);
  std::printf("%s %s=%llu %s=%llu %zu\\n", csv::state_name(r.final_state), csv::tag_name(0),
              (unsigned long long)r.counts[0], csv::tag_name(1), (unsigned long long)r.counts[1],
              r.matches.size());
  return 0;
}
"""


def build_app(tmp_path: Path, cmake_lines: str, cmake_args: list[str]) -> str:
    source = tmp_path / "app"
    source.mkdir()
    (source / "main.cpp").write_text(APP)
    (source / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\nproject(app LANGUAGES CXX)\n" + cmake_lines
        + "add_executable(app main.cpp)\ntarget_link_libraries(app PRIVATE csv::csv)\n")
    build(source, tmp_path / "app-build", Toolchain.current().cmake_args(mpi=False) + cmake_args)
    done = subprocess.run([str(tmp_path / "app-build" / "app")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_app_embeds_library_with_add_subdirectory(csv_project, tmp_path) -> None:
    """csv_project has the Python module; inside the app it is off by default, so the app
    builds without pybind11."""
    lines = f"add_subdirectory({csv_project} csv-build)\n"
    output = build_app(tmp_path, lines, ["-Dcsv_RUNNER=OFF",
                                         "-DCMAKE_DISABLE_FIND_PACKAGE_pybind11=ON"])
    assert output == "end_of_record field=2 record=2 4\n"
    assert not list((tmp_path / "app-build").rglob("csv.*.so"))


def test_app_embeds_installed_library_with_find_package(csv_project, tmp_path) -> None:
    prefix = tmp_path / "prefix"
    subprocess.run([Toolchain.current().tool("cmake"), "--install", str(csv_project / "build"),
                    "--prefix", str(prefix)], check=True, capture_output=True)
    assert (prefix / "include" / "csv.hpp").exists()
    output = build_app(tmp_path, "find_package(csv CONFIG REQUIRED)\n",
                       [f"-DCMAKE_PREFIX_PATH={prefix}"])
    assert output == "end_of_record field=2 record=2 4\n"


def sanitized_driver() -> Path:
    """The driver under the sanitizers with the SIMD kernels of the machines run below alone
    (every plan's kernels are 80 s of CPU to compile under them), at -O0: the instrumented
    code took twice as long to compile optimised (17 s against 8 for one unit), more than
    the runs below lose unoptimised."""
    from tests.property.fsm_regex_strategies import compile_patterns
    from tests.property.test_fsm_cpp_schemes import ASSERTION_SET

    machines = [sample_machine("clexer"), sample_machine("weblog"),
                compile_patterns(ASSERTION_SET)]
    with mock.patch.dict(os.environ, {OPTIMIZE_VARIABLE: "-O0"}):
        return table_driver(sanitize="address,undefined", fits=set_fits(machines))


def assert_kernels_fit(results: list[dict]) -> None:
    """No run fell back to scalar enumeration for want of the driver's SIMD kernels."""
    for result in results:
        assert "SIMD kernels were compiled for" not in result["reason"], result["reason"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["clexer", "weblog"])
def test_schemes_run_clean_under_sanitizers(name, tmp_path) -> None:
    driver = sanitized_driver()
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=1",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    machine = sample_machine(name)
    real = inputs.GENERATORS[name](20_000)
    noise = np.random.default_rng(1).integers(0, 256, 2000, dtype=np.uint8).tobytes()
    for data in (b"", real[:1], noise, real):
        assert_kernels_fit(assert_all_equal_reference(
            machine, data, tmp_path, driver=driver, env=env,
            configs=configurations(len(data), threads=(1, 3))))


def test_assertion_reports_run_clean_under_sanitizers(tmp_path) -> None:
    """Delayed and end-of-data reports (assertions) under every scheme, sanitized."""
    from tests.property.fsm_regex_strategies import compile_patterns
    from tests.property.test_fsm_cpp_schemes import ASSERTION_SET

    driver = sanitized_driver()
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=1",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    machine = compile_patterns(ASSERTION_SET)
    for data in (b"", b"\n", b"ab c\n" * 50 + b"x"):
        assert_kernels_fit(assert_all_equal_reference(
            machine, data, tmp_path, driver=driver, env=env,
            configs=configurations(len(data), threads=(1, 3))))
