"""An MPI application that finds an installed FSM project with find_package(M CONFIG) and
links M::M_mpi: it prints rank 0's counts of M::run_mpi, one per tag, in tag order."""

from __future__ import annotations

import subprocess
from pathlib import Path

from parafuse.emitters.toolchain.cmake import Toolchain, build
from parafuse.emitters.toolchain.mpirun import launch_environment, run_bounded

APP = """\
#include <mpi.h>
#include <cstdio>
#include "{name}_mpi.hpp"
int main(int argc, char** argv) {{
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  {name}::Options options;
  options.threads = 1;
  const {name}::Result result = {name}::run_mpi(MPI_COMM_WORLD, argv[1], options);
  if (rank == 0)
    for (unsigned long long count : result.counts) std::printf("%llu\\n", count);
  MPI_Finalize();
  return 0;
}}
"""


def build_mpi_app(project: Path, name: str, folder: Path, data: Path) -> list[int]:
    """Installs `project`, builds the app against the installed package, runs it at R = 2."""
    prefix = folder / "prefix"
    subprocess.run([Toolchain.current().tool("cmake"), "--install", str(project / "build"),
                    "--prefix", str(prefix)], check=True, capture_output=True)
    assert (prefix / "include" / f"{name}_mpi.hpp").exists()
    source = folder / "mpi_app"
    source.mkdir()
    (source / "main.cpp").write_text(APP.format(name=name))
    (source / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\nproject(mpi_app LANGUAGES CXX)\n"
        f"find_package({name} CONFIG REQUIRED)\nadd_executable(mpi_app main.cpp)\n"
        f"target_link_libraries(mpi_app PRIVATE {name}::{name}_mpi)\n")
    build(source, folder / "mpi_app-build", Toolchain.current().cmake_args(mpi=True)
          + [f"-DCMAKE_PREFIX_PATH={prefix}"])
    command = [Toolchain.current().tool("mpirun"), "--oversubscribe", "-np", "2",
               str(folder / "mpi_app-build" / "mpi_app"), str(data)]
    done = run_bounded(command, launch_environment(2))
    assert done.returncode == 0, done.stderr
    return [int(line) for line in done.stdout.split()]
