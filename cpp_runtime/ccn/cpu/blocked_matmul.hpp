// C[M, N] = A[M, K] x B[K, N] in float or double, row-major: a cache-blocked kernel
// parallel over rows, whose inner loop runs along a row of B (vectorisable).
// The CPU backend's f64 matmul (oneDNN has no f64 GEMM); see ccn/cpu/matmul.hpp.
#pragma once
#include "ccn/namespace.hpp"
#include <algorithm>
#include <cstdint>

namespace parafuse::ccn {

template <typename W>
void blocked_matmul(const W* a, const W* b, W* c, int64_t m, int64_t k, int64_t n) {
  constexpr int64_t kBlockK = 256, kBlockN = 512;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < m; ++i) {
    W* row = c + i * n;
    std::fill(row, row + n, W(0));
    for (int64_t k0 = 0; k0 < k; k0 += kBlockK) {
      int64_t k1 = std::min(k, k0 + kBlockK);
      for (int64_t j0 = 0; j0 < n; j0 += kBlockN) {
        int64_t j1 = std::min(n, j0 + kBlockN);
        for (int64_t kk = k0; kk < k1; ++kk) {
          const W scale = a[i * k + kk];
          const W* brow = b + kk * n;
#pragma omp simd
          for (int64_t j = j0; j < j1; ++j) row[j] += scale * brow[j];
        }
      }
    }
  }
}

}  // namespace parafuse::ccn
