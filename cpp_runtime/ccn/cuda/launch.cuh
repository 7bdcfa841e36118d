// Launching generated element-wise kernels: the block size, the grid of a range, the
// grid-stride loop over a range, and fills.
#pragma once
#include "ccn/namespace.hpp"
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "ccn/cuda/check.cuh"

// Launch __global__ `kernel` (a name or a pointer, no template commas) on `grid` blocks of
// kThreads. A test double of the device may define its own PF_LAUNCH first (the emulated
// device of ccn/cuda_emulated/ does, in its cuda_runtime.h).
#ifndef PF_LAUNCH
#define PF_LAUNCH(kernel, grid, stream, ...) kernel<<<grid, pf::kThreads, 0, stream>>>(__VA_ARGS__)
#endif

namespace parafuse::ccn {

constexpr int kThreads = 256;

inline int grid_for(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(std::clamp<int64_t>(blocks, 1, 65535));
}

// One generated element-wise kernel: f(i) for i in [lo, hi), grid-stride.
template <typename F> __global__ void for_each_kernel(int64_t lo, int64_t hi, F f) {
  for (int64_t i = lo + blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < hi;
       i += int64_t(gridDim.x) * blockDim.x) {
    f(i);
  }
}

template <typename F> void launch(int64_t lo, int64_t hi, cudaStream_t stream, F f) {
  if (hi <= lo) return;
  PF_LAUNCH(for_each_kernel, grid_for(hi - lo), stream, lo, hi, f);
  PF_CUDA(cudaGetLastError());
}

template <typename T> __global__ void fill_kernel(T* target, int64_t n, T value) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    target[i] = value;
  }
}

template <typename T> void fill(T* target, int64_t n, T value, cudaStream_t stream) {
  if (n <= 0) return;
  PF_LAUNCH(fill_kernel, grid_for(n), stream, target, n, value);
  PF_CUDA(cudaGetLastError());
}

template <typename T> void fill_scalar(T* target, T value, cudaStream_t stream) {
  fill(target, 1, value, stream);
}

}  // namespace parafuse::ccn
