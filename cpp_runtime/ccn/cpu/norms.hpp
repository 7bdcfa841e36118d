// Row-wise functions over the last dim, computed in float or double (docs/ccn-language.md
// section 5): layernorm (biased variance), rmsnorm and softmax in place; the row
// reductions sum, amax and mean into one element a row.
// The sums over a row are SIMD reductions (several partial sums, added at the end):
// a different order from one running sum, within the tolerances of section 13.
// (One running sum's chain of dependent additions would keep a row's sums from
// vectorising: a 256 x 1024 layernorm takes twice as long that way.)
#pragma once
#include <cmath>
#include <cstdint>

namespace pf {

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
      row[j] = std::exp(row[j] - largest);
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

}  // namespace pf
