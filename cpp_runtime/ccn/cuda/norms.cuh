// Row-wise normalisations over the last dim, in place, computed in float or double
// (docs/ccn-language.md section 5): layernorm (biased variance) and rmsnorm, one block per row.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "ccn/cuda/check.cuh"
#include "ccn/cuda/launch.cuh"

namespace pf {

// Row-wise layernorm / rmsnorm over the last dim, in place: one block per row.
template <typename W, bool Layer>
__global__ void norm_rows_kernel(W* data, int64_t rows, int64_t cols, W eps) {
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

template <typename W> void layernorm_rows(W* data, int64_t count, int64_t cols, W eps,
                                          cudaStream_t stream) {
  int64_t rows = cols ? count / cols : 0;
  if (rows == 0) return;
  auto* kernel = &norm_rows_kernel<W, true>;
  PF_LAUNCH(kernel, grid_for(rows), stream, data, rows, cols, eps);
  PF_CUDA(cudaGetLastError());
}

template <typename W> void rmsnorm_rows(W* data, int64_t count, int64_t cols, W eps,
                                        cudaStream_t stream) {
  int64_t rows = cols ? count / cols : 0;
  if (rows == 0) return;
  auto* kernel = &norm_rows_kernel<W, false>;
  PF_LAUNCH(kernel, grid_for(rows), stream, data, rows, cols, eps);
  PF_CUDA(cudaGetLastError());
}

}  // namespace pf
