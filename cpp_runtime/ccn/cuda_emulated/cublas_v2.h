// The part of cuBLAS that generated .ccn projects call, on the emulated device: column-major
// GEMM queued on the handle's stream, with cuBLAS's argument checks (leading dimensions),
// alpha and beta read from the host when called.
#pragma once
#include "ccn/namespace.hpp"
#include <algorithm>
#include <cstdint>

#include "ccn/cuda_emulated/cuda_runtime.h"

typedef enum {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_INVALID_VALUE = 7
} cublasStatus_t;
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 } cublasOperation_t;

struct cublasContext {
  cudaStream_t stream = nullptr;
};
typedef cublasContext* cublasHandle_t;

inline const char* cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    default: return "CUBLAS_STATUS_INVALID_VALUE";
  }
}
inline cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  *handle = new cublasContext;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

namespace parafuse::ccn::emulated {
// C[m,n] = alpha op(A)[m,k] op(B)[k,n] + beta C, column-major, accumulated in T.
template <typename T>
cublasStatus_t gemm(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m,
                    int n, int k, const T* alpha, const T* a, int lda, const T* b, int ldb,
                    const T* beta, T* c, int ldc) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  int a_rows = ta == CUBLAS_OP_N ? m : k, b_rows = tb == CUBLAS_OP_N ? k : n;
  if (m < 0 || n < 0 || k < 0 || lda < std::max(1, a_rows) || ldb < std::max(1, b_rows) ||
      ldc < std::max(1, m)) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  const T al = *alpha, be = *beta;
  if (k > 0) {
    require_device(a, sizeof(T) * (size_t(lda) * ((ta == CUBLAS_OP_N ? k : m) - 1) + a_rows),
                   "cublas A");
    require_device(b, sizeof(T) * (size_t(ldb) * ((tb == CUBLAS_OP_N ? n : k) - 1) + b_rows),
                   "cublas B");
  }
  require_device(c, sizeof(T) * (size_t(ldc) * (n - 1) + m), "cublas C");
  enqueue(handle->stream, [=] {
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < m; ++i) {
        T acc = 0;
        for (int p = 0; p < k; ++p) {
          T x = ta == CUBLAS_OP_N ? a[i + size_t(p) * lda] : a[p + size_t(i) * lda];
          T y = tb == CUBLAS_OP_N ? b[p + size_t(j) * ldb] : b[j + size_t(p) * ldb];
          acc += x * y;
        }
        T& out = c[i + size_t(j) * ldc];
        out = be == T(0) ? al * acc : al * acc + be * out;
      }
    }
  });
  return CUBLAS_STATUS_SUCCESS;
}
}  // namespace parafuse::ccn::emulated

inline cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t ta,
                                  cublasOperation_t tb, int m, int n, int k, const float* alpha,
                                  const float* a, int lda, const float* b, int ldb,
                                  const float* beta, float* c, int ldc) {
  return pf_emu::gemm(handle, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline cublasStatus_t cublasDgemm(cublasHandle_t handle, cublasOperation_t ta,
                                  cublasOperation_t tb, int m, int n, int k, const double* alpha,
                                  const double* a, int lda, const double* b, int ldb,
                                  const double* beta, double* c, int ldc) {
  return pf_emu::gemm(handle, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
