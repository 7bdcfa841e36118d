// Vectorised element-wise kernels: W elements per thread, loaded and stored as 16-byte
// words where every pointer is aligned, element by element elsewhere.
#pragma once
#include "ccn/namespace.hpp"
#include <cuda_runtime.h>

#include <cstdint>

#include "ccn/cuda/check.cuh"
#include "ccn/cuda/launch.cuh"

namespace parafuse::ccn {

// W elements of T in registers, loaded and stored as 16-byte words.
template <typename T, int W> struct alignas(16) Vec {
  static_assert(sizeof(T) * W % 16 == 0, "a Vec is whole 16-byte words");
  T v[W];
};

template <int W, typename T> __device__ inline Vec<T, W> load_vec(const T* at) {
  Vec<T, W> out;
  const uint4* from = reinterpret_cast<const uint4*>(at);
  uint4* to = reinterpret_cast<uint4*>(&out);
#pragma unroll
  for (int k = 0; k < int(sizeof(out) / 16); ++k) to[k] = from[k];
  return out;
}

template <int W, typename T> __device__ inline void store_vec(T* at, const Vec<T, W>& value) {
  const uint4* from = reinterpret_cast<const uint4*>(&value);
  uint4* to = reinterpret_cast<uint4*>(at);
#pragma unroll
  for (int k = 0; k < int(sizeof(value) / 16); ++k) to[k] = from[k];
}

// Are all of `pointers` + lo on 16-byte boundaries?
template <typename... P> inline bool aligned16(int64_t lo, P*... pointers) {
  return ((reinterpret_cast<uintptr_t>(pointers + lo) % 16 == 0) && ...);
}

template <int W, typename V> __global__ void vector_kernel(int64_t lo, int64_t groups, V f) {
  for (int64_t g = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; g < groups;
       g += int64_t(gridDim.x) * blockDim.x) {
    f(lo + g * W);
  }
}

// A kernel whose threads take W consecutive elements with 16-byte loads and stores
// (`vec(i0)`) where every pointer it touches is aligned at lo; the rest of the range,
// or all of it when unaligned, element by element (`scalar(i)`).
template <int W, typename V, typename S>
void launch_vectorized(int64_t lo, int64_t hi, bool aligned, cudaStream_t stream, V vec,
                       S scalar) {
  if (hi <= lo) return;
  int64_t groups = aligned ? (hi - lo) / W : 0;
  if (groups > 0) {
    auto* kernel = &vector_kernel<W, V>;
    PF_LAUNCH(kernel, grid_for(groups), stream, lo, groups, vec);
    PF_CUDA(cudaGetLastError());
  }
  launch(lo + groups * W, hi, stream, scalar);
}

}  // namespace parafuse::ccn
