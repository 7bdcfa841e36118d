// Row-wise functions over the last dim, computed in float or double (docs/ccn-language.md
// section 5): layernorm (biased variance), rmsnorm and softmax in place; the row
// reductions sum, amax and mean into one element a row, along the last dim or (the
// *_dim forms) along a middle one.
// The sums over a row are SIMD reductions (several partial sums, added at the end):
// a different order from one running sum, within the tolerances of section 13.
// (One running sum's chain of dependent additions would keep a row's sums from
// vectorising: a 256 x 1024 layernorm takes twice as long that way.)
#pragma once
#include "ccn/namespace.hpp"
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "ccn/cpu/math.hpp"

namespace parafuse::ccn {

template <typename W> void layernorm_rows(W* data, int64_t count, int64_t cols, W eps) {
  int64_t rows = cols ? count / cols : 0;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    W* row = data + r * cols;
    W mean = 0, var = 0;
#pragma omp simd reduction(+ : mean)
    for (int64_t j = 0; j < cols; ++j) mean += row[j];
    mean /= static_cast<W>(cols);
#pragma omp simd reduction(+ : var)
    for (int64_t j = 0; j < cols; ++j) var += (row[j] - mean) * (row[j] - mean);
    var /= static_cast<W>(cols);
    W scale = W(1) / std::sqrt(var + eps);
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) row[j] = (row[j] - mean) * scale;
  }
}

template <typename W> void rmsnorm_rows(W* data, int64_t count, int64_t cols, W eps) {
  int64_t rows = cols ? count / cols : 0;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    W* row = data + r * cols;
    W squares = 0;
#pragma omp simd reduction(+ : squares)
    for (int64_t j = 0; j < cols; ++j) squares += row[j] * row[j];
    W scale = W(1) / std::sqrt(squares / static_cast<W>(cols) + eps);
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) row[j] *= scale;
  }
}

// softmax over each row, its largest element subtracted first (finite for finite logits; a
// row of -inf is NaN, as 0 / 0).
template <typename W> void softmax_rows(W* data, int64_t count, int64_t cols) {
  int64_t rows = cols ? count / cols : 0;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    W* row = data + r * cols;
    W largest = -INFINITY;
    for (int64_t j = 0; j < cols; ++j) largest = row[j] > largest ? row[j] : largest;
    W sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < cols; ++j) {
      row[j] = softmax_exp(row[j] - largest);
      sum += row[j];
    }
    const W scale = W(1) / sum;
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) row[j] *= scale;
  }
}

// A row reduction: out[r] = `reduce` of row r, for `rows` rows of `cols` elements.
template <typename W, typename Reduce>
void reduce_rows(const W* in, W* out, int64_t rows, int64_t cols, Reduce reduce) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) out[r] = reduce(in + r * cols);
}

template <typename W> void sum_rows(const W* in, W* out, int64_t rows, int64_t cols) {
  reduce_rows(in, out, rows, cols, [cols](const W* row) {
    W sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < cols; ++j) sum += row[j];
    return sum;
  });
}

template <typename W> void mean_rows(const W* in, W* out, int64_t rows, int64_t cols) {
  sum_rows(in, out, rows, cols);
  for (int64_t r = 0; r < rows; ++r) out[r] /= static_cast<W>(cols);  // 0 / 0: NaN
}

template <typename W> void amax_rows(const W* in, W* out, int64_t rows, int64_t cols) {
  reduce_rows(in, out, rows, cols, [cols](const W* row) {
    W largest = -INFINITY;
    for (int64_t j = 0; j < cols; ++j) largest = row[j] > largest ? row[j] : largest;
    return largest;
  });
}

// A reduction along a middle dim: `in` is [outer, n, inner], out[o, i] combines in[o, :, i],
// a running value per element of a row of `inner`, so that the rows are read in order.
template <typename W, typename Combine>
void reduce_dim(const W* in, W* out, int64_t outer, int64_t n, int64_t inner, W identity,
                Combine combine) {
  constexpr int64_t kTile = 1024;
  const int64_t tiles = (inner + kTile - 1) / kTile;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t t = 0; t < tiles; ++t) {
      W* dst = out + o * inner;
      const int64_t i0 = t * kTile, i1 = i0 + kTile < inner ? i0 + kTile : inner;
      for (int64_t i = i0; i < i1; ++i) dst[i] = identity;
      for (int64_t j = 0; j < n; ++j) {
        const W* src = in + (o * n + j) * inner;
#pragma omp simd
        for (int64_t i = i0; i < i1; ++i) dst[i] = combine(dst[i], src[i]);
      }
    }
  }
}

template <typename W>
void sum_dim(const W* in, W* out, int64_t outer, int64_t n, int64_t inner) {
  reduce_dim(in, out, outer, n, inner, W(0), [](W a, W b) { return a + b; });
}

template <typename W>
void mean_dim(const W* in, W* out, int64_t outer, int64_t n, int64_t inner) {
  sum_dim(in, out, outer, n, inner);
  for (int64_t k = 0; k < outer * inner; ++k) out[k] /= static_cast<W>(n);  // 0 / 0: NaN
}

template <typename W>
void amax_dim(const W* in, W* out, int64_t outer, int64_t n, int64_t inner) {
  reduce_dim(in, out, outer, n, inner, W(-INFINITY), [](W a, W b) { return b > a ? b : a; });
}

}  // namespace parafuse::ccn
