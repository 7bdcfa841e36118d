// transpose(x, d0, d1) and slice(x, d, start, stop) on the device (the CPU's
// ccn/cpu/transpose.hpp says the layouts): one thread per element of the result.
#pragma once
#include "ccn/namespace.hpp"
#include <cstdint>

#include "ccn/cuda/launch.cuh"

namespace parafuse::ccn {

template <typename T>
void transpose_dims(const T* in, T* out, int64_t outer, int64_t n0, int64_t middle, int64_t n1,
                    int64_t inner, cudaStream_t stream) {
  const int64_t count = outer * n0 * middle * n1 * inner;
  launch(0, count, stream, [=] __device__(int64_t i) {
    int64_t rest = i;
    const int64_t c = rest % inner; rest /= inner;
    const int64_t j0 = rest % n0; rest /= n0;
    const int64_t b = rest % middle; rest /= middle;
    const int64_t j1 = rest % n1;
    const int64_t a = rest / n1;
    out[i] = in[(((a * n0 + j0) * middle + b) * n1 + j1) * inner + c];
  });
}

template <typename T>
void slice_dim(const T* in, T* out, int64_t outer, int64_t n, int64_t inner, int64_t start,
               int64_t length, cudaStream_t stream) {
  const int64_t row = length * inner;
  launch(0, outer * row, stream, [=] __device__(int64_t i) {
    out[i] = in[((i / row) * n + start) * inner + i % row];
  });
}

}  // namespace parafuse::ccn
