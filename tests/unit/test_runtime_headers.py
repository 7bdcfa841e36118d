"""Every header of cpp_runtime/ compiles alone with `-I cpp_runtime`: the C++ headers with the
host compiler (OpenMP, the wheel's MPI and oneDNN), those of ccn/cuda/ with nvcc (NCCL and cuBLAS
from their wheels, or the system's). Each is compiled as a one-line source that includes
it, as a generated project does, in the test of its own (pytest-xdist spreads them)."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

import pytest

from parafuse.emitters.toolchain.cmake import Toolchain
from parafuse.emitters.toolchain.nvidia import cublas_library, find_nvcc, nccl_library
from parafuse.emitters.toolchain.onednn import dnnl_cmake_dir
from parafuse.emitters.toolchain.runtime import CPP_RUNTIME
from tests.required_tools import require_cxx, require_nvcc

HEADERS = sorted(str(path.relative_to(CPP_RUNTIME)) for path in CPP_RUNTIME.rglob("*")
                 if path.suffix in (".hpp", ".cuh"))


def _needs_nvcc(header: str) -> bool:
    return header.startswith(("ccn/cuda/", "fsm/cuda/"))


@functools.cache
def _mpi_includes() -> tuple[str, ...]:
    shown = subprocess.run([Toolchain.current().tool("mpicxx"), "--showme:incdirs"],
                           capture_output=True, text=True, check=True).stdout.split()
    return tuple(f"-I{folder}" for folder in shown)


@functools.cache
def _dnnl_includes() -> tuple[str, ...]:
    """oneDNN's headers (ccn/cpu/matmul.hpp) from the onednn-devel-cpu-gomp wheel."""
    folder = dnnl_cmake_dir()
    return (f"-I{Path(folder).parents[2] / 'include'}",) if folder else ()


@functools.cache
def _python_includes() -> tuple[str, ...]:
    """pybind11's and Python's headers (common/dlpack_input.hpp, for generated modules)."""
    import sysconfig

    import pybind11

    return (f"-I{pybind11.get_include()}", f"-I{sysconfig.get_paths()['include']}")


def _command(header: str, folder: Path) -> list[str]:
    include = ["-I", str(CPP_RUNTIME), *_mpi_includes(), *_dnnl_includes(), *_python_includes()]
    if not _needs_nvcc(header):
        return ["c++", "-std=c++17", "-fsyntax-only", "-fopenmp", *include, "-x", "c++", "-"]
    source = folder / (header.replace("/", "_") + ".cu")
    source.write_text(f'#include "{header}"\n')
    libraries = [f"-I{lib.include}" for lib in (nccl_library(), cublas_library()) if lib.include]
    # -cuda: nvcc's front end checks the host and device code, without the host compiler's
    # second pass over what it generates (a third of the time); the device code is
    # generated as PTX of one architecture without optimisation (a quarter of the time left:
    # cicc at -O3 took 8 s of the 10 of fsm/cuda/prefilter.cuh).
    return [str(find_nvcc()), "-std=c++17", "-x", "cu", "--extended-lambda", *include, *libraries,
            "-arch=compute_90", "-Xcicc=-O0", "-cuda", str(source), "-o", "/dev/null"]


def _compile(header: str, folder: Path) -> str:
    """The compiler's complaints about `header` alone ("" when it compiles)."""
    done = subprocess.run(_command(header, folder), input=f'#include "{header}"\n',
                          capture_output=True, text=True)
    return "" if done.returncode == 0 else done.stdout + done.stderr


def test_the_tree_holds_headers_of_every_folder() -> None:
    folders = {header.rsplit("/", 1)[0] for header in HEADERS}
    assert {"common", "ccn", "ccn/cpu", "ccn/cuda", "fsm/core", "fsm/auto", "fsm/simd",
            "fsm/tokens", "fsm/sets", "fsm/mpi"} <= folders


@pytest.mark.parametrize("header", HEADERS)
def test_header_compiles_alone(header: str, tmp_path) -> None:
    require_cxx()
    if _needs_nvcc(header):
        require_nvcc()
    complaints = _compile(header, tmp_path)
    assert complaints == "", f"{header} alone:\n{complaints}"
