// Element-wise kernels that also sum K values of each element into K accumulators: the
// norms and sums of a fused phase's values, folded into the kernel that computes or reads
// them (emitters/ccn/cuda/folded_reductions.py). Each thread adds into registers, then a
// block reduction per accumulator and one atomic add per block, as pf::reduce does.
#pragma once
#include "ccn/namespace.hpp"
#include <cuda_runtime.h>

#include <cstdint>

#include "ccn/cuda/check.cuh"
#include "ccn/cuda/launch.cuh"
#include "ccn/cuda/reduce.cuh"

namespace parafuse::ccn {

template <int K, typename A> __device__ void add_block_sums(const A (&mine)[K], A* sums) {
  __shared__ A partial[kThreads];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    partial[threadIdx.x] = mine[k];
    __syncthreads();
    for (int width = kThreads / 2; width > 0; width /= 2) {
      if (threadIdx.x < width) partial[threadIdx.x] += partial[threadIdx.x + width];
      __syncthreads();
    }
    if (threadIdx.x == 0) atomic_combine(sums + k, partial[0], SumOp());
    __syncthreads();
  }
}

// f(i, mine) for i in [lo, hi), grid-stride, then mine[0, K) added into sums[0, K).
template <int K, typename A, typename F>
__global__ void summing_kernel(int64_t lo, int64_t hi, A* sums, F f) {
  A mine[K] = {};
  for (int64_t i = lo + blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < hi;
       i += int64_t(gridDim.x) * blockDim.x) {
    f(i, mine);
  }
  add_block_sums<K>(mine, sums);
}

// The same, each thread taking W consecutive elements: vec(i0, mine) (16-byte words).
template <int K, int W, typename A, typename V>
__global__ void summing_vector_kernel(int64_t lo, int64_t groups, A* sums, V vec) {
  A mine[K] = {};
  for (int64_t g = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; g < groups;
       g += int64_t(gridDim.x) * blockDim.x) {
    vec(lo + g * W, mine);
  }
  add_block_sums<K>(mine, sums);
}

template <int K, typename A, typename F>
void launch_summing(int64_t lo, int64_t hi, cudaStream_t stream, A* sums, F f) {
  if (hi <= lo) return;
  auto* kernel = &summing_kernel<K, A, F>;
  PF_LAUNCH(kernel, grid_for(hi - lo), stream, lo, hi, sums, f);
  PF_CUDA(cudaGetLastError());
}

// launch_vectorized (vectorized.cuh) with sums: 16-byte words where every pointer is
// aligned at lo, element by element for the rest.
template <int W, int K, typename A, typename V, typename S>
void launch_vectorized_summing(int64_t lo, int64_t hi, bool aligned, cudaStream_t stream,
                               A* sums, V vec, S scalar) {
  if (hi <= lo) return;
  const int64_t groups = aligned ? (hi - lo) / W : 0;
  if (groups > 0) {
    auto* kernel = &summing_vector_kernel<K, W, A, V>;
    PF_LAUNCH(kernel, grid_for(groups), stream, lo, groups, sums, vec);
    PF_CUDA(cudaGetLastError());
  }
  launch_summing<K>(lo + groups * W, hi, stream, sums, scalar);
}

}  // namespace parafuse::ccn
