// Attention in one kernel (emitters/ccn/attention.py): o = softmax(f(q k^T), -1) v over
// batches of rows, the scores never stored. One block a query row: the block computes the
// row's scores a tile of kAttentionTile keys at a time into shared memory (each a dot
// product in float, then `score(dot, index)`: the program's element-wise function of it,
// given the score's index in the [batches, tq, tk] scores), and keeps the running largest
// score, the running sum of exponentials and, per column of v, the running weighted sum
// (each rescaled when the largest grows): flash attention's online softmax. A row whose
// scores are all -inf gives NaN, as the softmax of the reference does.
#pragma once
#include "ccn/namespace.hpp"
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ccn/cuda/check.cuh"
#include "ccn/cuda/launch.cuh"
#include "ccn/half.hpp"

namespace parafuse::ccn {

constexpr int kAttentionTile = 256;  // keys a tile (scores in shared memory)
constexpr int kAttentionColumns = 8;  // columns of v a thread accumulates: dv <= 8 * kThreads

// The block's largest (Max) or sum of `value`; every thread gets it.
template <bool Max>
__device__ inline float block_combine(float value, float* partial) {
  partial[threadIdx.x] = value;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) {
      const float other = partial[threadIdx.x + w];
      partial[threadIdx.x] = Max ? (other > partial[threadIdx.x] ? other : partial[threadIdx.x])
                                 : partial[threadIdx.x] + other;
    }
    __syncthreads();
  }
  const float result = partial[0];
  __syncthreads();
  return result;
}

// Columns [first, first + kAttentionColumns * blockDim.x) of o (and of v).
template <typename In, typename Out, typename Score>
__global__ void attention_rows_kernel(const In* q, const In* k, const In* v, Out* o,
                                      int64_t rows, int64_t tq, int64_t tk, int64_t d,
                                      int64_t dv, int64_t first, Score score) {
  __shared__ float weights[kAttentionTile];
  __shared__ float partial[kThreads];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t batch = row / tq;
    const In* query = q + row * d;
    const In* keys = k + batch * tk * d;
    const In* values = v + batch * tk * dv;
    float largest = -INFINITY, sum = 0.0f, acc[kAttentionColumns];
    for (int c = 0; c < kAttentionColumns; ++c) acc[c] = 0.0f;
    for (int64_t t0 = 0; t0 < tk; t0 += kAttentionTile) {
      const int64_t count = tk - t0 < kAttentionTile ? tk - t0 : kAttentionTile;
      float tile_largest = -INFINITY;
      for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
        const In* key = keys + (t0 + j) * d;
        float dot = 0.0f;
        for (int64_t x = 0; x < d; ++x)
          dot += static_cast<float>(query[x]) * static_cast<float>(key[x]);
        weights[j] = score(dot, row * tk + t0 + j);
        tile_largest = weights[j] > tile_largest ? weights[j] : tile_largest;
      }
      const float now = fmaxf(largest, block_combine<true>(tile_largest, partial));
      if (now == -INFINITY) continue;  // every score so far is -inf: nothing to weigh yet
      const float rescale = expf(largest - now);  // 0 for the first finite tile
      float tile_sum = 0.0f;
      for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
        weights[j] = expf(weights[j] - now);
        tile_sum += weights[j];
      }
      sum = sum * rescale + block_combine<false>(tile_sum, partial);  // (its barriers order
      for (int c = 0; c < kAttentionColumns; ++c) {                   //  `weights` too)
        const int64_t column = first + threadIdx.x + int64_t(c) * blockDim.x;
        if (column >= dv) break;
        float weighted = 0.0f;
        for (int64_t j = 0; j < count; ++j)
          weighted += weights[j] * static_cast<float>(values[(t0 + j) * dv + column]);
        acc[c] = acc[c] * rescale + weighted;
      }
      largest = now;
      __syncthreads();  // before the next tile's scores overwrite `weights`
    }
    for (int c = 0; c < kAttentionColumns; ++c) {
      const int64_t column = first + threadIdx.x + int64_t(c) * blockDim.x;
      if (column >= dv) break;
      o[row * dv + column] = store_as<Out>(sum > 0.0f ? acc[c] / sum : NAN);
    }
  }
}

// o[b, i, :] = softmax_j(score(q[b, i, :] . k[b, j, :], index)) v[b, j, :] for the
// `batches` of q [batches, tq, d], k [batches, tk, d], v [batches, tk, dv], o [batches, tq,
// dv]; `score(dot, index)` is a __device__ function of a float and the score's index.
template <typename In, typename Out, typename Score>
void attention_rows(const In* q, const In* k, const In* v, Out* o, int64_t batches, int64_t tq,
                    int64_t tk, int64_t d, int64_t dv, cudaStream_t stream, Score score) {
  const int64_t rows = batches * tq;
  if (rows == 0) return;
  auto* kernel = &attention_rows_kernel<In, Out, Score>;
  // a kernel a group of columns (rows of v longer than a block's registers hold: each
  // group computes the scores again)
  for (int64_t first = 0; first < std::max<int64_t>(dv, 1);
       first += int64_t(kAttentionColumns) * kThreads) {
    PF_LAUNCH(kernel, static_cast<int>(std::min<int64_t>(rows, 65535)), stream, q, k, v, o,
              rows, tq, tk, d, dv, first, score);
    PF_CUDA(cudaGetLastError());
  }
}

}  // namespace parafuse::ccn
