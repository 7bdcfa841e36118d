// Row-wise functions over the last dim, in place, computed in float or double
// (docs/ccn-language.md section 5): layernorm (biased variance), rmsnorm and softmax, one
// block per row.
#pragma once
#include "ccn/namespace.hpp"
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ccn/cuda/check.cuh"
#include "ccn/cuda/launch.cuh"

namespace parafuse::ccn {

// An epsilon passed by value, or one computed in the step and read in device memory.
template <typename W> __device__ __forceinline__ W eps_value(W eps) { return eps; }
template <typename W> __device__ __forceinline__ W eps_value(const W* eps) { return *eps; }

// Row-wise layernorm / rmsnorm over the last dim, in place: one block per row. `E` is the
// epsilon's type: W, or a pointer to it in device memory.
template <typename W, bool Layer, typename E>
__global__ void norm_rows_kernel(W* data, int64_t rows, int64_t cols, E eps_at) {
  const W eps = eps_value<W>(eps_at);
  __shared__ W partial[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    W* row = data + r * cols;
    W mean = 0;
    if (Layer) {
      W sum = 0;
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) sum += row[j];
      partial[threadIdx.x] = sum;
      __syncthreads();
      for (int w = kThreads / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) partial[threadIdx.x] += partial[threadIdx.x + w];
        __syncthreads();
      }
      mean = partial[0] / static_cast<W>(cols);
      __syncthreads();
    }
    W squares = 0;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) squares += (row[j] - mean) * (row[j] - mean);
    partial[threadIdx.x] = squares;
    __syncthreads();
    for (int w = kThreads / 2; w > 0; w /= 2) {
      if (threadIdx.x < w) partial[threadIdx.x] += partial[threadIdx.x + w];
      __syncthreads();
    }
    W scale = W(1) / sqrt(partial[0] / static_cast<W>(cols) + eps);
    __syncthreads();
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) row[j] = (row[j] - mean) * scale;
  }
}

// One block per row (up to the grid's 65535; more rows are strided over the blocks).
inline int rows_grid(int64_t rows) { return static_cast<int>(std::min<int64_t>(rows, 65535)); }

template <typename W, typename E> void layernorm_rows(W* data, int64_t count, int64_t cols, E eps,
                                          cudaStream_t stream) {
  int64_t rows = cols ? count / cols : 0;
  if (rows == 0) return;
  auto* kernel = &norm_rows_kernel<W, true, E>;
  PF_LAUNCH(kernel, rows_grid(rows), stream, data, rows, cols, eps);
  PF_CUDA(cudaGetLastError());
}

// softmax over each row, its largest element subtracted first: one block per row, the
// largest element and the sum of exponentials each a block reduction.
template <typename W> __global__ void softmax_rows_kernel(W* data, int64_t rows, int64_t cols) {
  __shared__ W partial[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    W* row = data + r * cols;
    W largest = -INFINITY;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) largest = row[j] > largest ? row[j] : largest;
    partial[threadIdx.x] = largest;
    __syncthreads();
    for (int w = kThreads / 2; w > 0; w /= 2) {
      if (threadIdx.x < w && partial[threadIdx.x + w] > partial[threadIdx.x]) {
        partial[threadIdx.x] = partial[threadIdx.x + w];
      }
      __syncthreads();
    }
    largest = partial[0];
    __syncthreads();
    W sum = 0;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      row[j] = exp(row[j] - largest);
      sum += row[j];
    }
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int w = kThreads / 2; w > 0; w /= 2) {
      if (threadIdx.x < w) partial[threadIdx.x] += partial[threadIdx.x + w];
      __syncthreads();
    }
    const W scale = W(1) / partial[0];
    __syncthreads();
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) row[j] *= scale;
  }
}

template <typename W> void softmax_rows(W* data, int64_t count, int64_t cols, cudaStream_t stream) {
  int64_t rows = cols ? count / cols : 0;
  if (rows == 0) return;
  auto* kernel = &softmax_rows_kernel<W>;
  PF_LAUNCH(kernel, rows_grid(rows), stream, data, rows, cols);
  PF_CUDA(cudaGetLastError());
}

template <typename W, typename E> void rmsnorm_rows(W* data, int64_t count, int64_t cols, E eps,
                                        cudaStream_t stream) {
  int64_t rows = cols ? count / cols : 0;
  if (rows == 0) return;
  auto* kernel = &norm_rows_kernel<W, false, E>;
  PF_LAUNCH(kernel, rows_grid(rows), stream, data, rows, cols, eps);
  PF_CUDA(cudaGetLastError());
}

// The row reductions, one block per row: out[r] = the sum, largest element or mean of row r.
enum class RowReduction { kSum, kAmax, kMean };

template <typename W, RowReduction kKind>
__global__ void reduce_rows_kernel(const W* in, W* out, int64_t rows, int64_t cols) {
  __shared__ W partial[kThreads];
  constexpr bool kLargest = kKind == RowReduction::kAmax;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const W* row = in + r * cols;
    W value = kLargest ? W(-INFINITY) : W(0);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      value = kLargest ? (row[j] > value ? row[j] : value) : value + row[j];
    partial[threadIdx.x] = value;
    __syncthreads();
    for (int w = kThreads / 2; w > 0; w /= 2) {
      if (threadIdx.x < w) {
        const W other = partial[threadIdx.x + w];
        partial[threadIdx.x] = kLargest ? (other > partial[threadIdx.x] ? other : partial[threadIdx.x])
                                        : partial[threadIdx.x] + other;
      }
      __syncthreads();
    }
    if (threadIdx.x == 0)
      out[r] = kKind == RowReduction::kMean ? partial[0] / static_cast<W>(cols) : partial[0];
    __syncthreads();
  }
}

template <RowReduction kKind, typename W>
void reduce_rows(const W* in, W* out, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows == 0) return;
  auto* kernel = &reduce_rows_kernel<W, kKind>;
  PF_LAUNCH(kernel, rows_grid(rows), stream, in, out, rows, cols);
  PF_CUDA(cudaGetLastError());
}

// A reduction along a middle dim: `in` is [outer, n, inner]; a thread per output element
// (consecutive threads read consecutive elements of a row of `inner`).
template <typename W, RowReduction kKind>
__global__ void reduce_dim_kernel(const W* in, W* out, int64_t outer, int64_t n, int64_t inner) {
  constexpr bool kLargest = kKind == RowReduction::kAmax;
  const int64_t total = outer * inner;
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const W* src = in + (k / inner) * n * inner + k % inner;
    W value = kLargest ? W(-INFINITY) : W(0);
    for (int64_t j = 0; j < n; ++j) {
      const W x = src[j * inner];
      value = kLargest ? (x > value ? x : value) : value + x;
    }
    out[k] = kKind == RowReduction::kMean ? value / static_cast<W>(n) : value;
  }
}

template <RowReduction kKind, typename W>
void reduce_dim(const W* in, W* out, int64_t outer, int64_t n, int64_t inner, cudaStream_t stream) {
  if (outer * inner == 0) return;
  auto* kernel = &reduce_dim_kernel<W, kKind>;
  PF_LAUNCH(kernel, grid_for(outer * inner), stream, in, out, outer, n, inner);
  PF_CUDA(cudaGetLastError());
}

template <typename W> void sum_dim(const W* in, W* out, int64_t outer, int64_t n, int64_t inner, cudaStream_t stream) {
  reduce_dim<RowReduction::kSum>(in, out, outer, n, inner, stream);
}

template <typename W> void amax_dim(const W* in, W* out, int64_t outer, int64_t n, int64_t inner, cudaStream_t stream) {
  reduce_dim<RowReduction::kAmax>(in, out, outer, n, inner, stream);
}

template <typename W> void mean_dim(const W* in, W* out, int64_t outer, int64_t n, int64_t inner, cudaStream_t stream) {
  reduce_dim<RowReduction::kMean>(in, out, outer, n, inner, stream);
}

template <typename W> void sum_rows(const W* in, W* out, int64_t rows, int64_t cols, cudaStream_t stream) {
  reduce_rows<RowReduction::kSum>(in, out, rows, cols, stream);
}

template <typename W> void amax_rows(const W* in, W* out, int64_t rows, int64_t cols, cudaStream_t stream) {
  reduce_rows<RowReduction::kAmax>(in, out, rows, cols, stream);
}

template <typename W> void mean_rows(const W* in, W* out, int64_t rows, int64_t cols, cudaStream_t stream) {
  reduce_rows<RowReduction::kMean>(in, out, rows, cols, stream);
}

}  // namespace parafuse::ccn
