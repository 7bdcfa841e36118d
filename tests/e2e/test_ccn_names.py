"""Any name the .ccn language accepts builds: C++ keywords and names of the C, POSIX, MPI,
OpenMP, CUDA and NCCL headers (and of the generated code itself) used as program, size,
param, input, state, value, group, schedule and stage names, on the CPU backend and on
the CUDA backend's emulated device.

Breadth: every such name in every role, the generated sources compiled with
`-fsyntax-only`. Depth: one program of colliding names built and run on both backends
against the reference interpreter, its outputs named as the user named them."""

from __future__ import annotations

import json
import subprocess
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from parafuse.ccn_compiler.frontend import check_source
from parafuse.emitters.ccn.cpu.project import build_cpu_project
from parafuse.emitters.ccn.cpu.project import project_files as cpu_files
from parafuse.emitters.names import CXX_KEYWORDS, cpp_name
from parafuse.emitters.toolchain.cmake import Toolchain, write_tree
from parafuse.emitters.toolchain.mpirun import run_ranks
from parafuse.grammar.diagnostics import CompileError
from tests.backend_compare import assert_backend_matches_reference
from tests.cuda_emulation.emulated_project import build_emulated, emulated_files

LIBRARY = """pipe read write open close exit abort errno assert stdin stdout stderr signal time
clock select poll socket bind listen accept connect send recv kill wait sleep free malloc
printf puts index link unlink stat access random rand linux unix major minor offsetof
setjmp environ optarg NULL EOF INFINITY NAN main std pf parafuse py detail half dim3
blockIdx threadIdx warpSize Program Sizes Params Slot ScheduleImpl make_sizes parse_number
RunnerProgram PyProgram numpy_name copy_bytes communicator world test all install
MPI_Comm MPI_COMM_WORLD PMPI_Init ompi_x omp_get_num_threads cudaMalloc cudaStream_t
ncclComm_t cublasHandle_t PyObject PF_MPI PF_CUDA PF_HERE _x __y _Z a_ b__ pf_a pf1_b
PF2_c comm_ v_ L_x h_y_ x_rs_ chunks plan lo hi rank_ sizes_ params_ seed step_index
size_t uint32_t ssize_t pid_t expf sqrtf strtok islower asinh tm timespec FILE M_PI INT_MAX
EINVAL pipe2 sincos dup3 gettid exp10 clone fadd""".split()

ROLES = ("program", "size", "group", "param", "input", "state", "value", "next",
         "grouped", "schedule", "rs", "ag", "agw")


def program_text(names: dict[str, str]) -> str:
    n = names
    return f"""
program {n['program']}({n['size']}) {{
    group {n['group']} = blocks(2)
    param {n['param']}: f32 = 0.5
    input {n['input']}: f32[{n['size']}] local
    state {n['state']}: f32[{n['size']}] replicated
    {n['value']} = allreduce(sum, {n['input']})
    {n['grouped']} = allreduce(sum, {n['input']}, in {n['group']})
    {n['next']} = update({n['state']}, {n['state']} - {n['param']} * {n['value']})
    output {n['next']}, {n['grouped']}, {n['param']}
}}

schedule {n['schedule']} for {n['program']} {{
    {n['rs']}, {n['ag']} = split({n['value']})
    {n['agw']} = reorder({n['ag']}, {n['next']})
    shard({n['state']})
    fuse({n['rs']}, {n['next']}, {n['agw']})
}}
"""


def _accepted(name: str) -> bool:
    """Whether the language takes `name` (its builtins and keywords it does not; a name
    taken here but refused in another role fails the tests below, loudly)."""
    filler = {role: f"{role}_filler" for role in ROLES}
    try:
        for role in ("program", "value", "group"):
            check_source(program_text(dict(filler, **{role: name})), "names.ccn")
    except CompileError:
        return False
    return True


# Program names reach the most places (namespace, CMake targets, the Python module): the
# macros of the C library and names of the generated code are program names below.
FIRST_PROGRAMS = ["errno", "linux", "assert", "stdin", "NULL", "EOF", "INFINITY", "major",
                  "offsetof", "setjmp", "environ", "main", "test", "make_sizes", "PyProgram",
                  "Program", "world", "std", "class", "PF_MPI", "expf", "EINVAL", "tm"]
NAMES = [n for n in dict.fromkeys(sorted(CXX_KEYWORDS) + LIBRARY) if _accepted(n)]
PER_PROGRAM = len(ROLES)


def _groups() -> list[list[str]]:
    programs = [n for n in FIRST_PROGRAMS if n in NAMES]
    rest = [n for n in NAMES if n not in programs]
    per = PER_PROGRAM - 1
    groups = [[p] + rest[k * per:(k + 1) * per] for k, p in enumerate(programs)]
    left = rest[len(programs) * per:]
    return groups + [left[k:k + PER_PROGRAM] for k in range(0, len(left), PER_PROGRAM)]


GROUPS = _groups()


def _role_names(chunk: list[str]) -> dict[str, str]:
    padded = chunk + [f"extra{k}" for k in range(PER_PROGRAM - len(chunk))]
    return dict(zip(ROLES, padded))


def test_the_names_are_taken_by_the_language() -> None:
    """The breadth test must test something: most keywords and library names are taken."""
    assert len(NAMES) > 150, NAMES
    assert {"class", "pipe", "errno", "linux", "main", "test", "_x", "a_"} <= set(NAMES)


def _syntax_check(folder: Path, sources: list[str], preloaded: list[str]) -> str:
    """Errors of `c++ -fsyntax-only` on the project's sources, read as one translation
    unit (one parse of the headers instead of one per file; '' if none), with the
    `preloaded` headers (_preloaded) read first."""
    unit = folder / "names_check.cpp"
    unit.write_text("".join(f'#include "{folder / source}"\n' for source in sources))
    done = subprocess.run(_compiler(preloaded) + ["-I", str(folder / "include"),
                                                  "-fsyntax-only", str(unit)],
                          capture_output=True, text=True)
    return "" if done.returncode == 0 else f"{folder}:\n{done.stderr[-3000:]}"


def _compiler(flags: list[str]) -> list[str]:
    return [Toolchain.current().tool("mpicxx"), "-std=c++17", "-fopenmp", *flags]


def _preloaded(folder: Path, flags: list[str]) -> list[str]:
    """Flags that read, from one precompiled header, every header that the generated sources
    in `folder` include but their program's own: the system's, pybind11's and the copied
    runtime's, which no name changes (the groups' runtime copies are read from `folder`,
    so each is one file). A program's names are still parsed after all of them, as in a
    project, where its own header includes them first. An unusable precompiled header is
    an error, not a silent reparse."""
    generated = [path for path in [*folder.glob("src/*"), *folder.glob("include/*.hpp")]
                 if path.is_file()]
    lines = dict.fromkeys(line for path in generated for line in path.read_text().splitlines()
                          if line.startswith(("#include <", '#include "ccn/')))
    header = folder / "preloaded.hpp"
    header.write_text("\n".join(lines) + "\n")
    include = ["-I", str(folder / "include")]
    subprocess.run(_compiler(flags) + include + ["-c", "-x", "c++-header", str(header),
                                                 "-o", f"{header}.gch"],
                   check=True, capture_output=True, text=True)
    return [*flags, *include, "-include", str(header), "-Winvalid-pch", "-Werror=invalid-pch"]


def _python_flags() -> list[str]:
    import pybind11
    return ["-I", pybind11.get_include(), "-I", sysconfig.get_paths()["include"]]


EMULATED_FLAGS = ["-DPF_CUDA_EMULATION", "-Wno-unknown-pragmas"]


def _write_group(chunk: list[str], root: Path) -> tuple[str, Path, Path]:
    """The program name of `chunk`, and its CPU and emulated CUDA projects' sources."""
    names = _role_names(chunk)
    module = check_source(program_text(names), "names.ccn")
    program = names["program"]
    schedules = module.schedule_names(program)
    write_tree(root / "cpu", cpu_files(module, program, schedules, "names test", python=True))
    write_tree(root / "cuda", emulated_files(module, program, schedules))
    return program, root / "cpu", root / "cuda"


def _check_group(chunk: list[str], root: Path, preloaded: tuple[list[str], list[str]]) -> str:
    program, cpu, cuda = _write_group(chunk, root)
    sources = [f"src/{program}{suffix}.cpp" for suffix in ("", "_run", "_python")]
    errors = _syntax_check(cpu, sources, preloaded[0])
    errors += _syntax_check(cuda, [f"src/{program}_emulated.cpp", f"src/{program}_run.cpp"],
                            preloaded[1])
    return f"names {_role_names(chunk)}:\n{errors}" if errors else ""


@pytest.mark.slow
def test_every_name_in_every_role_compiles(tmp_path) -> None:
    _, cpu, cuda = _write_group([f"{role}_plain" for role in ROLES], tmp_path / "preloaded")
    with ThreadPoolExecutor(2) as pool:
        preloaded = tuple(pool.map(lambda args: _preloaded(*args), [
            (cpu, _python_flags()),
            (cuda, ["-I", str(cuda / "include/ccn/cuda_emulated"), *EMULATED_FLAGS])]))
        failures = list(pool.map(
            lambda item: _check_group(item[1], tmp_path / str(item[0]), preloaded),
            enumerate(GROUPS)))
    failed = [f for f in failures if f]
    assert not failed, "\n\n".join(failed)[:20000]


COLLIDING = {"program": "pipe", "size": "linux", "group": "world", "param": "class",
             "input": "errno", "state": "stdin", "value": "recv", "next": "a_",
             "grouped": "pf_a", "schedule": "delete", "rs": "int", "ag": "main",
             "agw": "Program"}


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["cpu", "cuda-emulated"])
def test_colliding_names_build_run_and_match_the_reference(backend, tmp_path) -> None:
    module = check_source(program_text(COLLIDING), "names.ccn")
    default = module.programs["pipe"]
    schedules = module.schedule_names("pipe")
    project = (build_cpu_project(module, "pipe", schedules, "names test") if backend == "cpu"
               else build_emulated(module, "pipe", schedules))
    for schedule in schedules:
        assert_backend_matches_reference(project, default,
                                         module.scheduled_program("pipe", schedule), schedule,
                                         2, {"linux": 1001}, tmp_path / schedule)
    manifest = json.loads((tmp_path / "delete" / "manifest.json").read_text())
    assert [entry["name"] for entry in manifest["outputs"]] == ["a_", "pf_a", "class", "stdin"]
    assert {e["name"]: e["value"] for e in manifest["outputs"]}["class"] == "class"  # a param
    done = run_ranks(project, "pipe", 2, ["--size", "linux=7", "--param", "class=0.25",
                                          "--random", "--json", "--schedule", "delete"])
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["program"], report["schedule"], report["sizes"]) == \
        ("pipe", "delete", {"linux": 7})
    header = (project / "include" / "pipe.hpp").read_text()
    assert f"namespace {cpp_name('pipe')} {{" in header and "int64_t pf_linux = 0;" in header
