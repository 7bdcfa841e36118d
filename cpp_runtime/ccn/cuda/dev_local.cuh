// pf::Local (a rank's block of a tensor) with fixed arrays, so that kernels can take it
// by value, and its extents on host and device.
#pragma once
#include "ccn/namespace.hpp"
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>

#include "ccn/program.hpp"

namespace parafuse::ccn {

constexpr int kMaxRank = 8;
struct DevLocal {
  int64_t logical[kMaxRank] = {}, start[kMaxRank] = {}, shape[kMaxRank] = {};
  int64_t count = 1;
  int rank = 0;
};

inline DevLocal device_local(const Local& local) {
  DevLocal out;
  out.rank = static_cast<int>(local.shape.size());
  if (out.rank > kMaxRank) throw std::invalid_argument("tensors of more than 8 dims");
  for (int d = 0; d < out.rank; ++d) {
    out.logical[d] = local.logical[d];
    out.start[d] = local.start[d];
    out.shape[d] = local.shape[d];
  }
  out.count = local.count;
  return out;
}

inline Local host_local(const DevLocal& d) {
  Local out;
  out.logical.assign(d.logical, d.logical + d.rank);
  out.start.assign(d.start, d.start + d.rank);
  out.shape.assign(d.shape, d.shape + d.rank);
  out.count = d.count;
  return out;
}

__host__ __device__ inline size_t dims_of(const DevLocal& local) {
  return static_cast<size_t>(local.rank);
}
__host__ __device__ inline int64_t inner_count(const DevLocal& local, int from) {
  int64_t count = 1;
  for (int d = from; d < local.rank; ++d) count *= local.shape[d];
  return count;
}
__host__ __device__ inline int64_t outer_count(const DevLocal& local, int until) {
  int64_t count = 1;
  for (int d = 0; d < until && d < local.rank; ++d) count *= local.shape[d];
  return count;
}

}  // namespace parafuse::ccn
