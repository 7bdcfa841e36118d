"""Any name the .fsm language accepts works: machines, states and tags named after every
C++ keyword and after C, POSIX, MPI and OpenMP names give projects that compile, and the
names users see (the runner's JSON, its file name, the Python module) stay theirs.

For breadth, every machine's sources are checked with `c++ -fsyntax-only` (the libraries
of all machines in one translation unit, the Python modules of the library names in
another; their runners one by one, since a keyword breaks every unit alike); one project is
built and run in full.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pybind11
import pytest

from parafuse.emitters.fsm.project import cached_project, project_files
from parafuse.emitters.names import CXX_KEYWORDS, cpp_name
from parafuse.emitters.toolchain.cmake import write_tree
from parafuse.emitters.toolchain.runtime import CPP_RUNTIME
from parafuse.fsm_compiler.compiled import CompiledMachine
from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import SourceFile
from tests.property.fsm_cpp_driver import project_request

LIBRARY_NAMES = """
pipe errno linux unix i386 main fsm std test stdin stdout assert read write index
_x __y pf_z MPI_Comm omp_get_num_threads NULL EOF printf exit signal time select y0
environ py parafuse detail run tables state_name tag_name state_count tag_count
start_state Options Result Match Tables kStateNames kTagNames numbered_states
run_report final_state_json expf EINVAL tm pipe2 sincos gettid
""".split()
NAMES = sorted(CXX_KEYWORDS) + LIBRARY_NAMES
CXX = ["c++", "-std=gnu++17", "-fopenmp", "-w"]  # gnu++17, as CMake builds: `linux` is 1


def machine_named(name: str, state: str | None = None, tag: str | None = None
                  ) -> CompiledMachine:
    """An explicit machine `name` with one state and one tag, named alike by default."""
    state, tag = state or name, tag or name
    source = f"machine {name} {{ start {state}  state {state} report {tag} {{ _ -> {state} }} }}\n"
    return compile_file(SourceFile(f"{name}.fsm", source)).machines[0]


def python_includes() -> list[str]:
    return [f"-I{pybind11.get_include()}", f"-I{sysconfig.get_paths()['include']}"]


def check(args: list[str], cwd: Path) -> str:
    """Run the compiler; its errors, or "" when there are none."""
    done = subprocess.run(CXX + args, cwd=cwd, capture_output=True, text=True, timeout=600)
    return "" if done.returncode == 0 else done.stderr[-3000:]


@pytest.fixture(scope="module")
def projects(tmp_path_factory) -> Path:
    """Every named machine's project under one folder, one subfolder each."""
    root = tmp_path_factory.mktemp("fsm_names")
    for name in NAMES:
        machine = machine_named(name)
        write_tree(root / name, project_files(project_request(machine, f"{name}.fsm",
                                                              python=True)))
    return root


def test_every_library_compiles_in_one_translation_unit(projects: Path) -> None:
    """include/M.hpp, src/M.cpp and src/M_tables.cpp of every machine, one after another."""
    unit = projects / "libraries.cpp"
    unit.write_text("".join(f'#include "{name}/src/{name}.cpp"\n'
                            f'#include "{name}/src/{name}_tables.cpp"\n' for name in NAMES))
    includes = [f"-I{projects / name / 'include'}" for name in NAMES]
    errors = check(["-fsyntax-only", f"-I{CPP_RUNTIME}", *includes,
                    '-DPARAFUSE_BLOB_PATH="blob"', str(unit)], projects)
    assert not errors, errors


def test_runners_of_library_names_compile(projects: Path) -> None:
    """A keyword breaks every unit alike (the library test covers them); library names
    are checked against the runner's headers too."""
    def runner(name: str) -> str:
        return check(["-fsyntax-only", f"-I{CPP_RUNTIME}", "-Iinclude", f"src/{name}_run.cpp"],
                     projects / name)

    with ThreadPoolExecutor(2) as pool:
        errors = {name: error for name, error in zip(LIBRARY_NAMES,
                                                    pool.map(runner, LIBRARY_NAMES)) if error}
    assert not errors, errors


def test_python_modules_keep_the_users_name(projects: Path) -> None:
    """Preprocessed, each module of a library name defines PyInit_<the user's name> (a
    name that is a C macro, such as `linux` or `errno`, is not expanded)."""
    def init_function(name: str) -> str:
        done = subprocess.run(CXX + ["-E", "-P", *python_includes(), "-Iinclude",
                                     f"src/{name}_python.cpp"], cwd=projects / name,
                              capture_output=True, text=True, timeout=600)
        return done.stderr[-2000:] if done.returncode else " ".join(
            re.findall(r"PyInit_\w+", done.stdout))

    with ThreadPoolExecutor(2) as pool:
        found = dict(zip(LIBRARY_NAMES, pool.map(init_function, LIBRARY_NAMES)))
    wrong = {name: text for name, text in found.items() if f"PyInit_{name}" not in text.split()}
    assert not wrong, wrong


# The helpers every module defines in its unnamed namespace, renamed per module so that the
# modules of all library names compile as one translation unit (pybind11's headers parsed once).
MODULE_HELPERS = ("pf_match_dtype", "pf_match_array", "pf_run")


@pytest.mark.slow
def test_python_modules_of_library_names_compile(projects: Path) -> None:
    """Keywords fail the same way in every unit (the library test covers them); the
    names of C, POSIX and Python headers are checked against pybind11's headers too."""
    unit = projects / "modules.cpp"
    unit.write_text("#include <pybind11/pybind11.h>\n" + "".join(
        "".join(f"#define {helper} {helper}_{index}\n" for helper in MODULE_HELPERS)
        + f'#include "{name}/src/{name}_python.cpp"\n'
        + "".join(f"#undef {helper}\n" for helper in MODULE_HELPERS)
        for index, name in enumerate(LIBRARY_NAMES)))
    includes = [f"-I{projects / name / 'include'}" for name in LIBRARY_NAMES]
    errors = check(["-fsyntax-only", *python_includes(), *includes, str(unit)], projects)
    assert not errors, errors


def test_type_names_ending_in_t(tmp_path: Path) -> None:
    for name in ("size_t", "uint32_t", "ssize_t"):
        write_tree(tmp_path / name, project_files(project_request(machine_named(name),
                                                                  f"{name}.fsm")))
        errors = check(["-fsyntax-only", f"-I{CPP_RUNTIME}", "-Iinclude", f"src/{name}_run.cpp"],
                       tmp_path / name)
        assert not errors, errors


def test_pipe_with_states_int_and_class_and_tag_errno_runs(tmp_path: Path) -> None:
    """Built and run: the runner is pipe_run, its JSON and the module speak the user's names."""
    source = ("machine pipe { start int  state int { 'a' -> class  _ -> int }\n"
              "  state class report errno { _ -> int } }\n")
    machine = compile_file(SourceFile("pipe.fsm", source)).machines[0]
    assert cpp_name("pipe") != "pipe"
    project = cached_project(project_request(machine, "pipe.fsm", python=True))
    data = tmp_path / "input"
    data.write_bytes(b"xaxxa")
    done = subprocess.run([str(project / "build" / "pipe_run"), str(data), "--json"],
                          capture_output=True, text=True, timeout=60, check=True)
    report = json.loads(done.stdout)
    assert report["machine"] == "pipe" and report["final_state"] == "class"
    assert report["counts"] == {"errno": 2}
    module = next((project / "build").glob("pipe.*.so"))
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import pipe; "
            "print(json.dumps(pipe.run(b'xaxxa')))")
    done = subprocess.run([sys.executable, "-c", code, str(module.parent)],
                          capture_output=True, text=True, timeout=60, check=True)
    result = json.loads(done.stdout)
    assert result["machine"] == "pipe" and result["final_state"] == "class"
    assert result["counts"] == {"errno": 2}
