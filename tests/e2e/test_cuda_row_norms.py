"""The CUDA runtime's row norms (cpp_runtime/ccn/cuda/norms.cuh) on the emulated device:
one block per row (up to the grid's limit), and the same rows whether the epsilon is a
value or device memory."""

from __future__ import annotations

import subprocess

import pytest

from parafuse.emitters.toolchain.cmake import Toolchain, cached_build
from parafuse.emitters.toolchain.runtime import runtime_folders

CHECK = r"""
#include <cuda_runtime.h>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ccn/cuda/norms.cuh"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int64_t rows = std::atoll(argv[1]), cols = std::atoll(argv[2]);
  std::vector<float> host(rows * cols);
  for (size_t k = 0; k < host.size(); ++k) host[k] = float((k * 37) % 101) / 7.0f;
  float *by_value, *by_pointer, *eps;
  cudaMalloc(&by_value, host.size() * sizeof(float));
  cudaMalloc(&by_pointer, host.size() * sizeof(float));
  cudaMalloc(&eps, sizeof(float));
  const float e = 1e-3f;
  cudaMemcpy(eps, &e, sizeof e, cudaMemcpyHostToDevice);
  cudaMemcpy(by_value, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(by_pointer, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice);
  cudaDeviceSynchronize();  // copies from pageable memory may land late: wait for them
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  pf::layernorm_rows(by_value, rows * cols, cols, e, stream);
  const unsigned grid = pf_emu::last_grid().x;
  pf::layernorm_rows(by_pointer, rows * cols, cols, static_cast<const float*>(eps), stream);
  std::vector<float> a(host.size()), b(host.size());
  cudaMemcpy(a.data(), by_value, a.size() * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(b.data(), by_pointer, b.size() * sizeof(float), cudaMemcpyDeviceToHost);
  bool same = a == b, normal = true;
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0;
    for (int64_t j = 0; j < cols; ++j) mean += a[r * cols + j];
    normal = normal && std::fabs(mean / cols) < 1e-4;
  }
  std::printf("grid %u same %d normal %d\n", grid, same, normal);
  MPI_Finalize();
  return 0;
}
"""

CMAKE = """cmake_minimum_required(VERSION 3.18)
project(row_norms CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(MPI REQUIRED COMPONENTS CXX)
add_executable(row_norms row_norms.cpp)
target_include_directories(row_norms PRIVATE include/ccn/cuda_emulated include)
target_compile_definitions(row_norms PRIVATE PF_CUDA_EMULATION)
target_link_libraries(row_norms PRIVATE MPI::MPI_CXX)
"""


@pytest.fixture(scope="module")
def row_norms():
    files = {"CMakeLists.txt": CMAKE, "row_norms.cpp": CHECK}
    files.update(runtime_folders(["ccn", "ccn/cuda", "ccn/cuda_emulated"], under="include"))
    project = cached_build("cuda-row-norms", files, Toolchain.current().cmake_args(mpi=True))
    return project / "build" / "row_norms"


@pytest.mark.parametrize(("rows", "cols"), [(1, 5), (300, 3), (517, 33)])
def test_one_block_per_row(row_norms, rows: int, cols: int) -> None:
    done = subprocess.run([str(row_norms), str(rows), str(cols)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["grid", str(rows), "same", "1", "normal", "1"]
