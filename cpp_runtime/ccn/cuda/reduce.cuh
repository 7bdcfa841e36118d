// Reductions of generated kernels: a block reduction per block, then one atomic
// compare-and-swap per block into the accumulator.
#pragma once
#include "ccn/namespace.hpp"
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ccn/cuda/check.cuh"
#include "ccn/cuda/launch.cuh"

namespace parafuse::ccn {

// Combine `value` into *target with an atomic compare-and-swap (any 4- or 8-byte type).
template <typename A, typename Op> __device__ void atomic_combine(A* target, A value, Op op) {
  using Word = std::conditional_t<sizeof(A) == 4, unsigned int, unsigned long long>;
  Word* address = reinterpret_cast<Word*>(target);
  Word old = *address, assumed;
  do {
    assumed = old;
    A now;
    memcpy(&now, &assumed, sizeof(A));
    A next = op(now, value);
    Word bits;
    memcpy(&bits, &next, sizeof(A));
    old = atomicCAS(address, assumed, bits);
  } while (assumed != old);
}

struct SumOp {
  template <typename A> __host__ __device__ A operator()(A a, A b) const { return a + b; }
};
struct MaxOp {
  template <typename A> __host__ __device__ A operator()(A a, A b) const {
    if constexpr (std::is_floating_point_v<A>) {
      if (isnan(a) || isnan(b)) return isnan(a) ? a : b;
    }
    return a > b ? a : b;
  }
};

// acc = op over i in [0, n) of f(i): a block reduction per block, then one atomic each.
template <typename A, typename Op, typename F>
__global__ void reduce_kernel(int64_t n, A identity, Op op, F f, A* acc) {
  __shared__ A partial[kThreads];
  A mine = identity;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    mine = op(mine, f(i));
  }
  partial[threadIdx.x] = mine;
  __syncthreads();
  for (int width = kThreads / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) partial[threadIdx.x] = op(partial[threadIdx.x], partial[threadIdx.x + width]);
    __syncthreads();
  }
  if (threadIdx.x == 0) atomic_combine(acc, partial[0], op);
}

template <typename A, typename Op, typename F>
void reduce(int64_t n, A identity, Op op, cudaStream_t stream, A* acc, F f) {
  fill_scalar(acc, identity, stream);
  if (n <= 0) return;
  PF_LAUNCH(reduce_kernel, std::min(grid_for(n), 1024), stream, n, identity, op, f, acc);
  PF_CUDA(cudaGetLastError());
}

}  // namespace parafuse::ccn
