// The reduction of the node-shared collectives: out = op over ranks, in rank order, of
// every rank's elements, accumulated in the compute type and rounded once (the
// reference's order and rounding, docs/ccn-language.md section 7).
#pragma once
#include "ccn/namespace.hpp"
#include <algorithm>
#include <cstdint>
#include <vector>

#include "ccn/cpu/half.hpp"
#include "ccn/cpu/math.hpp"
#include "ccn/mpi_util.hpp"

namespace parafuse::ccn {

template <typename C> inline C combine(ReduceOp op, C a, C b) {
  switch (op) {
    case ReduceOp::prod: return a * b;
    case ReduceOp::max: return maximum(a, b);
    case ReduceOp::min: return minimum(a, b);
    default: return a + b;
  }
}

// out[j] = op(sources[0][j], ..., sources[parts - 1][j]) for j < n; OpenMP threads share
// the blocks. `out` may be one of the sources.
template <typename T>
void reduce_in_rank_order(const std::vector<const T*>& sources, int64_t n, T* out, ReduceOp op) {
  using C = compute_t<T>;
  constexpr int64_t kBlock = 1024;
  const int parts = static_cast<int>(sources.size());
  #pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = std::min(kBlock, n - b);
    C acc[kBlock];
    const T* first = sources[0] + b;
    for (int64_t j = 0; j < m; ++j) acc[j] = static_cast<C>(first[j]);
    for (int r = 1; r < parts; ++r) {
      const T* x = sources[r] + b;
      if (op == ReduceOp::sum || op == ReduceOp::avg) {
        for (int64_t j = 0; j < m; ++j) acc[j] += static_cast<C>(x[j]);
      } else {
        for (int64_t j = 0; j < m; ++j) acc[j] = combine(op, acc[j], static_cast<C>(x[j]));
      }
    }
    if (op == ReduceOp::avg) {
      for (int64_t j = 0; j < m; ++j) acc[j] = acc[j] / static_cast<C>(parts);
    }
    for (int64_t j = 0; j < m; ++j) out[b + j] = store_as<T>(acc[j]);
  }
}

}  // namespace parafuse::ccn
