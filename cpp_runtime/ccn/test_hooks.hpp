// Test hooks of the runner, compiled into every runner (docs/ccn.md): the tests use
// them to check that a failing rank aborts every rank, and to count the work each rank
// does (a pipeline stage multiplies its own layers only).
#pragma once
#include "ccn/namespace.hpp"
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "ccn/mpi_util.hpp"

namespace parafuse::ccn {

// PARAFUSE_FAIL_RANK=r makes rank r fail inside its first step.
inline void test_hook_fail_rank(MPI_Comm comm) {
  const char* text = std::getenv("PARAFUSE_FAIL_RANK");
  if (text && std::atoi(text) == comm_rank(comm)) {
    throw std::runtime_error("failure injected by PARAFUSE_FAIL_RANK");
  }
}

// The multiply-adds times two of every matmul this process ran (each GEMM adds 2 m k n).
inline std::atomic<int64_t>& matmul_flops() {
  static std::atomic<int64_t> flops{0};
  return flops;
}

inline void count_matmul(int64_t m, int64_t k, int64_t n) {
  matmul_flops().fetch_add(2 * m * k * n, std::memory_order_relaxed);
}

// PARAFUSE_COUNT_WORK=1 makes every rank print its count after the last step, one line
// on stderr: "work: rank R matmul_flops F".
inline void test_hook_report_work(MPI_Comm comm) {
  const char* text = std::getenv("PARAFUSE_COUNT_WORK");
  if (!text || std::atoi(text) == 0) return;
  std::fprintf(stderr, "work: rank %d matmul_flops %lld\n", comm_rank(comm),
               static_cast<long long>(matmul_flops().load()));
}

}  // namespace parafuse::ccn
