// Attention in one kernel (emitters/ccn/attention.py): o = softmax(f(q k^T), -1) v over
// batches of rows, the scores never stored: flash attention's online softmax (the running
// largest score, the running sum of exponentials and the running weighted sum of v's rows,
// each rescaled when the largest grows). Each score is a dot product in float, then
// `score(dot, index)`: the program's element-wise function of it, given the score's index
// in the [batches, tq, tk] scores. Rows of q and v of at most kTileDims take the tiled
// kernel (attention_tiles_kernel), longer ones the row kernel (attention_rows_kernel: a
// block a query row, its scores a tile of kAttentionTile keys at a time in shared memory).
// A row whose scores are all -inf gives NaN, as the softmax of the reference does.
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

constexpr int kTileRows = 32;   // query rows a block of the tiled kernel
constexpr int kTileKeys = 16;   // keys a tile
constexpr int kTileDims = 128;  // its d and dv at most (longer rows take the row kernel)

// The tiled kernel, for d and dv of at most kTileDims: a block takes kTileRows query rows,
// and the keys and values a tile of kTileKeys at a time, each tile read once into shared
// memory for all the block's rows (the row kernel reads every key once a query row). Its
// scores go to shared memory; a thread a row keeps that row's running softmax, and the
// kThreads / kTileRows threads of a row share its columns of the weighted sum.
template <typename In, typename Out, typename Score>
__global__ void attention_tiles_kernel(const In* q, const In* k, const In* v, Out* o,
                                       int64_t batches, int64_t tq, int64_t tk, int64_t d,
                                       int64_t dv, Score score) {
  constexpr int kPerRow = kThreads / kTileRows;   // threads a row's columns are shared by
  constexpr int kColumns = kTileDims / kPerRow;   // columns a thread accumulates
  __shared__ float queries[kTileRows][kTileDims];
  __shared__ float keys[kTileKeys][kTileDims];
  __shared__ float values[kTileKeys][kTileDims];
  __shared__ float weights[kTileRows][kTileKeys];
  __shared__ float largest[kTileRows], total[kTileRows], rescale[kTileRows];
  const int row = threadIdx.x / kPerRow, lane = threadIdx.x % kPerRow;
  const int64_t row_tiles = (tq + kTileRows - 1) / kTileRows;
  for (int64_t tile = blockIdx.x; tile < batches * row_tiles; tile += gridDim.x) {
    const int64_t batch = tile / row_tiles, r0 = (tile % row_tiles) * kTileRows;
    const int64_t rows = tq - r0 < kTileRows ? tq - r0 : kTileRows;
    const In* query = q + (batch * tq + r0) * d;
    for (int64_t e = threadIdx.x; e < rows * d; e += blockDim.x)
      queries[e / d][e % d] = static_cast<float>(query[e]);
    if (threadIdx.x < kTileRows) largest[threadIdx.x] = -INFINITY, total[threadIdx.x] = 0.0f;
    float acc[kColumns];
    for (int c = 0; c < kColumns; ++c) acc[c] = 0.0f;
    for (int64_t t0 = 0; t0 < tk; t0 += kTileKeys) {
      const int64_t count = tk - t0 < kTileKeys ? tk - t0 : kTileKeys;
      const In* key = k + (batch * tk + t0) * d;
      const In* value = v + (batch * tk + t0) * dv;
      for (int64_t e = threadIdx.x; e < count * d; e += blockDim.x)
        keys[e / d][e % d] = static_cast<float>(key[e]);
      for (int64_t e = threadIdx.x; e < count * dv; e += blockDim.x)
        values[e / dv][e % dv] = static_cast<float>(value[e]);
      __syncthreads();
      for (int64_t pair = threadIdx.x; pair < rows * count; pair += blockDim.x) {
        const int64_t i = pair / count, j = pair % count;
        float dot = 0.0f;
        for (int64_t x = 0; x < d; ++x) dot += queries[i][x] * keys[j][x];
        weights[i][j] = score(dot, (batch * tq + r0 + i) * tk + t0 + j);
      }
      __syncthreads();
      if (threadIdx.x < rows) {  // the row's running softmax
        const int i = threadIdx.x;
        float now = largest[i];
        for (int64_t j = 0; j < count; ++j) now = fmaxf(now, weights[i][j]);
        if (now == -INFINITY) {  // every score so far is -inf: nothing to weigh yet
          rescale[i] = 1.0f;
          for (int64_t j = 0; j < count; ++j) weights[i][j] = 0.0f;
        } else {
          rescale[i] = expf(largest[i] - now);  // 0 for the row's first finite tile
          float sum = 0.0f;
          for (int64_t j = 0; j < count; ++j) sum += weights[i][j] = expf(weights[i][j] - now);
          total[i] = total[i] * rescale[i] + sum;
          largest[i] = now;
        }
      }
      __syncthreads();
      if (row < rows)
        for (int c = 0; c < kColumns; ++c) {
          const int64_t column = lane + int64_t(c) * kPerRow;
          if (column >= dv) break;
          float weighted = 0.0f;
          for (int64_t j = 0; j < count; ++j) weighted += weights[row][j] * values[j][column];
          acc[c] = acc[c] * rescale[row] + weighted;
        }
      __syncthreads();  // before the next tile overwrites the keys, values and weights
    }
    if (row < rows)
      for (int c = 0; c < kColumns; ++c) {
        const int64_t column = lane + int64_t(c) * kPerRow;
        if (column >= dv) break;
        o[(batch * tq + r0 + row) * dv + column] =
            store_as<Out>(total[row] > 0.0f ? acc[c] / total[row] : NAN);
      }
    __syncthreads();  // before the next block of rows overwrites the queries and sums
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
  if (d <= kTileDims && dv <= kTileDims) {
    auto* tiles = &attention_tiles_kernel<In, Out, Score>;
    const int64_t blocks = batches * ((tq + kTileRows - 1) / kTileRows);
    PF_LAUNCH(tiles, static_cast<int>(std::min<int64_t>(blocks, 65535)), stream, q, k, v, o,
              batches, tq, tk, d, dv, score);
    PF_CUDA(cudaGetLastError());
    return;
  }
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
