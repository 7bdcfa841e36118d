// matmul of generated .ccn programs through cuBLAS (row-major a[M,K] x b[K,N] in float
// or double), every call checked.
#pragma once
#include "ccn/namespace.hpp"
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "ccn/cuda/check.cuh"
#include "ccn/test_hooks.hpp"  // count_matmul

#define PF_CUBLAS(call)                                                               \
  do {                                                                                \
    cublasStatus_t pf_status_ = (call);                                               \
    if (pf_status_ != CUBLAS_STATUS_SUCCESS) {                                        \
      pf::device_failed(#call, __FILE__, __LINE__, cublasGetStatusString(pf_status_)); \
    }                                                                                 \
  } while (0)

namespace parafuse::ccn {

// out[M,N] = a[M,K] b[K,N], row-major: cuBLAS computes out^T = b^T a^T column-major.
inline void matmul(cublasHandle_t handle, cudaStream_t stream, const float* a, const float* b,
                   float* out, int64_t m, int64_t k, int64_t n) {
  count_matmul(m, k, n);
  if (m == 0 || n == 0) return;
  PF_CUBLAS(cublasSetStream(handle, stream));
  const float one = 1.0f, zero = 0.0f;
  PF_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n),
                        static_cast<int>(m), static_cast<int>(k), &one, b, std::max(1, static_cast<int>(n)),
                        a, std::max(1, static_cast<int>(k)), &zero, out, std::max(1, static_cast<int>(n))));
}

inline void matmul(cublasHandle_t handle, cudaStream_t stream, const double* a, const double* b,
                   double* out, int64_t m, int64_t k, int64_t n) {
  count_matmul(m, k, n);
  if (m == 0 || n == 0) return;
  PF_CUBLAS(cublasSetStream(handle, stream));
  const double one = 1.0, zero = 0.0;
  PF_CUBLAS(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n),
                        static_cast<int>(m), static_cast<int>(k), &one, b, std::max(1, static_cast<int>(n)),
                        a, std::max(1, static_cast<int>(k)), &zero, out, std::max(1, static_cast<int>(n))));
}

}  // namespace parafuse::ccn
