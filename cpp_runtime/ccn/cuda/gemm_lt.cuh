// matmul of generated .ccn programs through cuBLASLt: operands of one dtype (bf16, f16 or
// f32) as they are, accumulated in f32 (f32 operands without TF32), the product written in
// its own dtype, and the element-wise stages the lowering plan gives the GEMM (bias, GELU in
// its tanh form, ReLU, or bias then either) applied in its epilogue.
#pragma once
#include "ccn/namespace.hpp"
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>

#include "ccn/batches.hpp"
#include "ccn/cuda/blas.cuh"  // PF_CUBLAS
#include "ccn/cuda/check.cuh"
#include "ccn/cuda/half.hpp"
#include "ccn/cuda/launch.cuh"
#include "ccn/epilogue.hpp"

namespace parafuse::ccn {

template <typename T> constexpr cudaDataType_t lt_type();
template <> constexpr cudaDataType_t lt_type<float>() { return CUDA_R_32F; }
template <> constexpr cudaDataType_t lt_type<bf16>() { return CUDA_R_16BF; }
template <> constexpr cudaDataType_t lt_type<f16>() { return CUDA_R_16F; }

inline cublasLtEpilogue_t lt_epilogue(Epilogue e) {
  switch (e) {
    case Epilogue::bias: return CUBLASLT_EPILOGUE_BIAS;
    case Epilogue::gelu: return CUBLASLT_EPILOGUE_GELU;
    case Epilogue::relu: return CUBLASLT_EPILOGUE_RELU;
    case Epilogue::bias_gelu: return CUBLASLT_EPILOGUE_GELU_BIAS;
    case Epilogue::bias_relu: return CUBLASLT_EPILOGUE_RELU_BIAS;
    default: return CUBLASLT_EPILOGUE_DEFAULT;
  }
}

// The largest power of two (at most 256) that divides an address: the alignment cuBLASLt
// may assume of an operand (its default, 256, would admit kernels that fault on the
// offset rows of a chunk).
inline uint32_t alignment_of(const void* p) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  uint32_t align = 256;
  while (align > 1 && address % align) align /= 2;
  return align;
}

// One cuBLASLt handle and workspace per program; a GEMM's descriptors and algorithm are
// made once per shape, dtypes, epilogue and operand alignments, and kept.
class LtGemm {
 public:
  static constexpr size_t kWorkspaceBytes = size_t(32) << 20;  // cuBLAS's advice for Hopper

  void open() {
    PF_CUBLAS(cublasLtCreate(&handle_));
    PF_CUDA(cudaMalloc(&workspace_, kWorkspaceBytes));
  }
  void close() {
    for (auto& [key, plan] : plans_) {
      cublasLtMatmulDescDestroy(plan.desc);
      for (cublasLtMatrixLayout_t layout : {plan.b_layout, plan.a_layout, plan.out_layout}) {
        cublasLtMatrixLayoutDestroy(layout);
      }
    }
    plans_.clear();
    if (workspace_) cudaFree(workspace_);
    if (handle_) cublasLtDestroy(handle_);
    workspace_ = nullptr;
    handle_ = nullptr;
  }

  // out[m,n] = epilogue(a[m,k] b[k,n] (+ bias[n])), row-major, on `stream`. cuBLASLt is
  // column-major: it computes out^T = b^T a^T, whose rows are the n columns of out, so the
  // bias is a vector along its rows, as cuBLASLt's epilogue adds it.
  template <typename In, typename Out>
  void gemm(cudaStream_t stream, const In* a, const In* b, Out* out, int64_t m, int64_t k,
            int64_t n, Epilogue epilogue = Epilogue::none,
            const typename NotDeduced<Out>::type* bias = nullptr) {
    count_matmul(m, k, n);
    if (m == 0 || n == 0) return;
    if (k == 0) {  // an empty sum: cuBLASLt wants k >= 1
      launch(0, m * n, stream, [=] __device__(int64_t i) {
        out[i] = store_as<Out>(apply_epilogue(epilogue, 0.0f, bias, i % n));
      });
      return;
    }
    const Key key{lt_type<In>(), lt_type<Out>(), m, k, n, epilogue,
                  alignment_of(a), alignment_of(b), alignment_of(out)};
    const Plan& plan = plan_for(key);
    if (bias) {
      PF_CUBLAS(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                               &bias, sizeof(bias)));
    }
    const float one = 1.0f, zero = 0.0f;
    PF_CUBLAS(cublasLtMatmul(handle_, plan.desc, &one, b, plan.b_layout, a, plan.a_layout, &zero,
                             out, plan.out_layout, out, plan.out_layout, &plan.algo, workspace_,
                             kWorkspaceBytes, stream));
  }

 private:
  using Key = std::tuple<cudaDataType_t, cudaDataType_t, int64_t, int64_t, int64_t, Epilogue,
                         uint32_t, uint32_t, uint32_t>;
  struct Plan {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t b_layout = nullptr, a_layout = nullptr, out_layout = nullptr;
    cublasLtMatmulAlgo_t algo{};
  };

  const Plan& plan_for(const Key& key) {
    auto found = plans_.find(key);
    if (found != plans_.end()) return found->second;
    const auto [in, out, m, k, n, epilogue, align_a, align_b, align_out] = key;
    Plan plan;
    PF_CUBLAS(cublasLtMatmulDescCreate(&plan.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t none = CUBLAS_OP_N;
    PF_CUBLAS(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSA, &none,
                                             sizeof(none)));
    PF_CUBLAS(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSB, &none,
                                             sizeof(none)));
    const cublasLtEpilogue_t lt = lt_epilogue(epilogue);
    PF_CUBLAS(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &lt,
                                             sizeof(lt)));
    if (adds_bias(epilogue)) {
      const int32_t bias_type = out;  // the bias has the product's dtype
      PF_CUBLAS(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                               &bias_type, sizeof(bias_type)));
    }
    // column-major: b as [n, k] (leading dimension n), a as [k, m] (k), out as [n, m] (n)
    PF_CUBLAS(cublasLtMatrixLayoutCreate(&plan.b_layout, in, n, k, n));
    PF_CUBLAS(cublasLtMatrixLayoutCreate(&plan.a_layout, in, k, m, k));
    PF_CUBLAS(cublasLtMatrixLayoutCreate(&plan.out_layout, out, n, m, n));
    cublasLtMatmulPreference_t preference = nullptr;
    PF_CUBLAS(cublasLtMatmulPreferenceCreate(&preference));
    const size_t workspace = kWorkspaceBytes;
    PF_CUBLAS(cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace)));
    // cuBLASLt's A is our b, its B our a
    const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> alignments[] = {
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align_b},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align_a},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align_out},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align_out}};
    for (const auto& [attribute, bytes] : alignments) {
      PF_CUBLAS(cublasLtMatmulPreferenceSetAttribute(preference, attribute, &bytes,
                                                     sizeof(bytes)));
    }
    cublasLtMatmulHeuristicResult_t result{};
    int found_count = 0;
    PF_CUBLAS(cublasLtMatmulAlgoGetHeuristic(handle_, plan.desc, plan.b_layout, plan.a_layout,
                                             plan.out_layout, plan.out_layout, preference, 1,
                                             &result, &found_count));
    cublasLtMatmulPreferenceDestroy(preference);
    if (found_count == 0) {
      device_failed("cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__,
                    "cuBLASLt has no algorithm for this GEMM (shape, dtypes, epilogue, "
                    "alignment)");
    }
    plan.algo = result.algo;
    return plans_.emplace(key, plan).first->second;
  }

  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  std::map<Key, Plan> plans_;
};

}  // namespace parafuse::ccn
