// The part of cuBLASLt that generated .ccn projects call, on the emulated device: a
// column-major matmul D = epilogue(alpha op(A) op(B) + beta C) queued on a stream, A and B
// of one dtype (f32, f16 or bf16) read as f32, accumulated in f32 in order of k, D written
// in its dtype (rounded to nearest even), with cuBLASLt's epilogues (bias along D's rows,
// GELU in its tanh form, ReLU, bias then GELU or ReLU). Descriptors hold what the
// generated code sets; the checks are cuBLASLt's (leading dimensions, a bias pointer for a
// bias epilogue, operands in device memory).
#pragma once
#include "ccn/namespace.hpp"
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "ccn/cuda_emulated/cublas_v2.h"
#include "ccn/cuda_emulated/cuda_bf16.h"
#include "ccn/cuda_emulated/cuda_fp16.h"

typedef enum { CUDA_R_16F = 2, CUDA_R_32F = 0, CUDA_R_16BF = 14 } cudaDataType_t;
typedef enum { CUBLAS_COMPUTE_32F = 68 } cublasComputeType_t;
typedef enum {
  CUBLASLT_EPILOGUE_DEFAULT = 1,
  CUBLASLT_EPILOGUE_RELU = 2,
  CUBLASLT_EPILOGUE_BIAS = 4,
  CUBLASLT_EPILOGUE_RELU_BIAS = 6,
  CUBLASLT_EPILOGUE_GELU = 32,
  CUBLASLT_EPILOGUE_GELU_BIAS = 36
} cublasLtEpilogue_t;
typedef enum {
  CUBLASLT_MATMUL_DESC_TRANSA = 3,
  CUBLASLT_MATMUL_DESC_TRANSB = 4,
  CUBLASLT_MATMUL_DESC_EPILOGUE = 7,
  CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8,
  CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 26
} cublasLtMatmulDescAttributes_t;
typedef enum {
  CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES = 6,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES = 7,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES = 8
} cublasLtMatmulPreferenceAttributes_t;

struct cublasLtContext {};
typedef cublasLtContext* cublasLtHandle_t;
struct cublasLtMatmulDescOpaque_t {
  cublasOperation_t trans_a = CUBLAS_OP_N, trans_b = CUBLAS_OP_N;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;
  int32_t bias_type = -1;  // -1: D's
};
typedef cublasLtMatmulDescOpaque_t* cublasLtMatmulDesc_t;
struct cublasLtMatrixLayoutOpaque_t {
  cudaDataType_t type;
  uint64_t rows, cols;
  int64_t ld;
};
typedef cublasLtMatrixLayoutOpaque_t* cublasLtMatrixLayout_t;
struct cublasLtMatmulPreferenceOpaque_t {};
typedef cublasLtMatmulPreferenceOpaque_t* cublasLtMatmulPreference_t;
struct cublasLtMatmulAlgo_t {
  uint64_t data[8];
};
struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};

inline cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  *handle = new cublasLtContext;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc,
                                               cublasComputeType_t compute,
                                               cudaDataType_t scale) {
  if (compute != CUBLAS_COMPUTE_32F || scale != CUDA_R_32F) return CUBLAS_STATUS_INVALID_VALUE;
  *desc = new cublasLtMatmulDescOpaque_t;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  delete desc;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                                     cublasLtMatmulDescAttributes_t attribute,
                                                     const void* value, size_t bytes) {
  switch (attribute) {
    case CUBLASLT_MATMUL_DESC_TRANSA: std::memcpy(&desc->trans_a, value, bytes); break;
    case CUBLASLT_MATMUL_DESC_TRANSB: std::memcpy(&desc->trans_b, value, bytes); break;
    case CUBLASLT_MATMUL_DESC_EPILOGUE: std::memcpy(&desc->epilogue, value, bytes); break;
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER: std::memcpy(&desc->bias, value, bytes); break;
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: std::memcpy(&desc->bias_type, value, bytes); break;
    default: return CUBLAS_STATUS_INVALID_VALUE;
  }
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout,
                                                 cudaDataType_t type, uint64_t rows,
                                                 uint64_t cols, int64_t ld) {
  if (ld < static_cast<int64_t>(std::max<uint64_t>(1, rows))) return CUBLAS_STATUS_INVALID_VALUE;
  *layout = new cublasLtMatrixLayoutOpaque_t{type, rows, cols, ld};
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  delete layout;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* preference) {
  *preference = new cublasLtMatmulPreferenceOpaque_t;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t preference) {
  delete preference;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasLtMatmulPreferenceSetAttribute(
    cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t, const void*, size_t) {
  return CUBLAS_STATUS_SUCCESS;
}
// One algorithm fits every GEMM here (the loops of cublasLtMatmul).
inline cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
    cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
    cublasLtMatmulPreference_t, int requested, cublasLtMatmulHeuristicResult_t* results,
    int* returned) {
  if (!handle || requested < 1) return CUBLAS_STATUS_INVALID_VALUE;
  results[0] = cublasLtMatmulHeuristicResult_t{};
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

namespace parafuse::ccn::emulated {
inline size_t lt_item_size(cudaDataType_t type) { return type == CUDA_R_32F ? 4 : 2; }
inline float lt_load(const void* base, cudaDataType_t type, size_t index) {
  switch (type) {
    case CUDA_R_16F: return static_cast<float>(static_cast<const __half*>(base)[index]);
    case CUDA_R_16BF: return static_cast<float>(static_cast<const __nv_bfloat16*>(base)[index]);
    default: return static_cast<const float*>(base)[index];
  }
}
inline void lt_store(void* base, cudaDataType_t type, size_t index, float value) {
  switch (type) {
    case CUDA_R_16F: static_cast<__half*>(base)[index] = __half(value); break;
    case CUDA_R_16BF: static_cast<__nv_bfloat16*>(base)[index] = __nv_bfloat16(value); break;
    default: static_cast<float*>(base)[index] = value;
  }
}
inline size_t lt_bytes(const cublasLtMatrixLayoutOpaque_t& l) {
  return lt_item_size(l.type) * (size_t(l.ld) * (l.cols - 1) + l.rows);
}
}  // namespace parafuse::ccn::emulated

inline cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                     const void* alpha, const void* a,
                                     cublasLtMatrixLayout_t la, const void* b,
                                     cublasLtMatrixLayout_t lb, const void* beta, const void* c,
                                     cublasLtMatrixLayout_t lc, void* d,
                                     cublasLtMatrixLayout_t ld, const cublasLtMatmulAlgo_t*,
                                     void*, size_t, cudaStream_t stream) {
  using namespace pf_emu;
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  const bool ta = desc->trans_a == CUBLAS_OP_T, tb = desc->trans_b == CUBLAS_OP_T;
  const uint64_t m = ld->rows, n = ld->cols, k = ta ? la->rows : la->cols;
  if (la->type != lb->type || (ta ? la->cols : la->rows) != m || (tb ? lb->cols : lb->rows) != k ||
      (tb ? lb->rows : lb->cols) != n || lc->rows != m || lc->cols != n || k == 0) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  const cublasLtEpilogue_t epilogue = desc->epilogue;
  const bool with_bias = epilogue == CUBLASLT_EPILOGUE_BIAS ||
                         epilogue == CUBLASLT_EPILOGUE_GELU_BIAS ||
                         epilogue == CUBLASLT_EPILOGUE_RELU_BIAS;
  const cudaDataType_t bias_type =
      desc->bias_type < 0 ? ld->type : static_cast<cudaDataType_t>(desc->bias_type);
  if (with_bias && !desc->bias) return CUBLAS_STATUS_INVALID_VALUE;
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  require_device(a, lt_bytes(*la), "cublasLt A");
  require_device(b, lt_bytes(*lb), "cublasLt B");
  require_device(d, lt_bytes(*ld), "cublasLt D");
  if (with_bias) require_device(desc->bias, lt_item_size(bias_type) * m, "cublasLt bias");
  const float al = *static_cast<const float*>(alpha), be = *static_cast<const float*>(beta);
  const cublasLtMatrixLayoutOpaque_t A = *la, B = *lb, C = *lc, D = *ld;
  const void* bias = desc->bias;
  enqueue(stream, [=] {
    for (uint64_t j = 0; j < n; ++j) {
      for (uint64_t i = 0; i < m; ++i) {
        float acc = 0;
        for (uint64_t p = 0; p < k; ++p) {
          const float x = lt_load(a, A.type, ta ? p + i * A.ld : i + p * A.ld);
          const float y = lt_load(b, B.type, tb ? j + p * B.ld : p + j * B.ld);
          acc += x * y;
        }
        float v = al * acc;
        if (be != 0.0f) v += be * lt_load(c, C.type, i + j * C.ld);
        if (with_bias) v += lt_load(bias, bias_type, i);
        if (epilogue == CUBLASLT_EPILOGUE_GELU || epilogue == CUBLASLT_EPILOGUE_GELU_BIAS) {
          v = 0.5f * v * (1.0f + std::tanh(0.7978845608028654f * (v + 0.044715f * v * v * v)));
        } else if (epilogue == CUBLASLT_EPILOGUE_RELU || epilogue == CUBLASLT_EPILOGUE_RELU_BIAS) {
          v = std::isnan(v) ? v : std::max(v, 0.0f);
        }
        lt_store(d, D.type, i + j * D.ld, v);
      }
    }
  });
  return CUBLAS_STATUS_SUCCESS;
}
