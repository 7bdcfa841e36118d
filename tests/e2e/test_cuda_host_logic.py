"""Host logic of the CUDA backend that needs no GPU: the padded chunk layout of the
pipelined fused collectives (cpp_runtime/ccn/cuda/padded_chunks.hpp, the ChunkPlan of
ccn/chunk_plan.hpp with NCCL's equal pieces). A host program simulates R ranks: each packs
its pieces with `pack`, an NCCL reduce-scatter and allgather are emulated on the padded
buffers, and `unpack` puts the gathered pieces in place; the result must be the split
rule's blocks of the sum, for uneven and empty blocks and more chunks than rows."""

from __future__ import annotations

import subprocess

import pytest

from parafuse.emitters.toolchain.cmake import Toolchain, cached_build
from parafuse.emitters.toolchain.runtime import runtime_folders

SIMULATION = r"""
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "ccn/cuda/padded_chunks.hpp"

int main(int argc, char** argv) {
  const int64_t rows = std::atoll(argv[1]), row_elems = std::atoll(argv[2]);
  const int parts = std::atoi(argv[3]), chunks = std::atoi(argv[4]);
  const pf::PaddedChunks layout(rows, row_elems, parts, chunks);
  auto copy = [](const double* from, double* to, int64_t n) {
    for (int64_t k = 0; k < n; ++k) to[k] = from[k];
  };
  const int64_t n = rows * row_elems;
  std::vector<std::vector<double>> whole(parts, std::vector<double>(n));
  std::vector<double> sum(n, 0.0);
  for (int r = 0; r < parts; ++r)
    for (int64_t k = 0; k < n; ++k) sum[k] += whole[r][k] = (r + 1) * 1000.0 + k;
  std::vector<std::vector<double>> block(parts), gathered(parts, std::vector<double>(n, -1));
  for (int r = 0; r < parts; ++r) block[r].assign(layout.plan.block_rows[r] * row_elems, -1);
  for (int c = 0; c < chunks; ++c) {
    std::vector<std::vector<double>> packed(parts, std::vector<double>(layout.total, 0.0));
    for (int r = 0; r < parts; ++r) layout.pack(whole[r].data(), packed[r].data(), c, copy);
    std::vector<double> sent(layout.total, 0.0);
    for (int d = 0; d < parts; ++d) {  // reduce-scatter: rank d gets slot d of the sum
      auto [lo, hi] = layout.plan.mine(d, c);
      const int64_t slot = layout.offset[c] + d * layout.piece[c];
      for (int64_t k = 0; k < hi - lo; ++k) {
        double total = 0;
        for (int r = 0; r < parts; ++r) total += packed[r][slot + k];
        block[d][lo + k] = total;
        sent[slot + k] = total;  // allgather's slot d
      }
    }
    for (int r = 0; r < parts; ++r) layout.unpack(sent.data(), gathered[r].data(), c, copy);
  }
  for (int d = 0; d < parts; ++d)
    for (int64_t k = 0; k < (int64_t)block[d].size(); ++k)
      if (block[d][k] != sum[layout.plan.block_start[d] * row_elems + k]) {
        std::printf("block %d element %ld wrong\n", d, (long)k);
        return 1;
      }
  for (int r = 0; r < parts; ++r)
    for (int64_t k = 0; k < n; ++k)
      if (gathered[r][k] != sum[k]) {
        std::printf("gathered %d element %ld wrong\n", r, (long)k);
        return 1;
      }
  std::printf("ok\n");
  return 0;
}
"""

CMAKE = """cmake_minimum_required(VERSION 3.18)
project(padded_chunks CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(MPI REQUIRED COMPONENTS CXX)
add_executable(simulate simulate.cpp)
target_include_directories(simulate PRIVATE include)
target_link_libraries(simulate PRIVATE MPI::MPI_CXX)
"""


@pytest.fixture(scope="module")
def simulator():
    files = {"CMakeLists.txt": CMAKE, "simulate.cpp": SIMULATION}
    files.update(runtime_folders(["common", "ccn", "ccn/cpu", "ccn/cuda"], under="include"))
    project = cached_build("cuda-padded-chunks", files, Toolchain.current().cmake_args(mpi=True))
    return project / "build" / "simulate"


@pytest.mark.parametrize(("rows", "row_elems", "parts", "chunks"), [
    (12, 1, 3, 2), (10, 3, 4, 3), (2, 5, 4, 1), (7, 2, 3, 16), (1001, 1, 4, 4), (0, 4, 2, 2),
])
def test_padded_chunks_reduce_scatter_and_gather(simulator, rows, row_elems, parts,
                                                 chunks) -> None:
    done = subprocess.run([str(simulator), str(rows), str(row_elems), str(parts), str(chunks)],
                          capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr
