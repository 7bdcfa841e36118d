// Moving a rank's block (docs/ccn-language.md section 5). transpose(x, d0, d1): the block
// seen as [outer, n0, middle, n1, inner] (n0, n1 the swapped dims) becomes
// [outer, n1, middle, n0, inner]; a sliced dim moves with its dim, so the transposed block
// is this rank's block of the result. slice(x, d, start, stop): [outer, n, inner] becomes
// [outer, length, inner], indices start .. start + length of the middle dim (never sliced).
#pragma once
#include "ccn/namespace.hpp"
#include <cstdint>

namespace parafuse::ccn {

template <typename T>
void transpose_dims(const T* in, T* out, int64_t outer, int64_t n0, int64_t middle, int64_t n1,
                    int64_t inner) {
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t a = 0; a < outer; ++a) {
    for (int64_t j1 = 0; j1 < n1; ++j1) {
      for (int64_t b = 0; b < middle; ++b) {
        for (int64_t j0 = 0; j0 < n0; ++j0) {
          const T* from = in + (((a * n0 + j0) * middle + b) * n1 + j1) * inner;
          T* to = out + (((a * n1 + j1) * middle + b) * n0 + j0) * inner;
          for (int64_t c = 0; c < inner; ++c) to[c] = from[c];
        }
      }
    }
  }
}

template <typename T>
void slice_dim(const T* in, T* out, int64_t outer, int64_t n, int64_t inner, int64_t start,
               int64_t length) {
#pragma omp parallel for schedule(static)
  for (int64_t a = 0; a < outer; ++a) {
    const T* from = in + (a * n + start) * inner;
    T* to = out + a * length * inner;
    for (int64_t k = 0; k < length * inner; ++k) to[k] = from[k];
  }
}

}  // namespace parafuse::ccn
