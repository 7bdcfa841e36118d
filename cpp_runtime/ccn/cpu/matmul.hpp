// C[M, N] = A[M, K] x B[K, N], row-major, accumulated in f32 (f64 for f64), by oneDNN's
// matmul primitive (the onednn-cpu-gomp wheel; OpenMP threads, like the rest of the step):
//   float x float -> float, bf16 x bf16 -> bf16 or float, f16 x f16 -> f16 or float,
//   double x double -> double (the blocked kernel: oneDNN has no f64 GEMM).
// A 16-bit result is rounded once from the f32 sum (round to nearest even), the rounding
// point of docs/ccn-language.md section 4. Where this CPU has no f16 GEMM (oneDNN needs
// AVX512-FP16 or AMX-FP16), f16 operands are widened to float, which is exact, and
// multiplied in f32. The lowering plan's epilogue (ccn/epilogue.hpp) is oneDNN's bias and
// eltwise post-op, applied to the f32 sums before the rounding. Primitives are created once
// per shape, types and epilogue, and kept.
#pragma once
#include "ccn/namespace.hpp"
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "ccn/batches.hpp"
#include "ccn/cpu/blocked_matmul.hpp"
#include "ccn/cpu/half.hpp"
#include "ccn/epilogue.hpp"
#include "ccn/test_hooks.hpp"

namespace parafuse::ccn {

namespace gemm {

template <typename T> constexpr dnnl::memory::data_type dnnl_type();
template <> constexpr dnnl::memory::data_type dnnl_type<float>() { return dnnl::memory::data_type::f32; }
template <> constexpr dnnl::memory::data_type dnnl_type<bf16>() { return dnnl::memory::data_type::bf16; }
template <> constexpr dnnl::memory::data_type dnnl_type<f16>() { return dnnl::memory::data_type::f16; }

struct Engine {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::mutex mutex;
  // (input type, output type, M, K, N, epilogue) -> the primitive, or none where oneDNN has
  // none
  std::map<std::tuple<int, int, int64_t, int64_t, int64_t, Epilogue>,
           std::unique_ptr<dnnl::matmul>>
      primitives;
};

inline Engine& engine() {
  static Engine instance;
  return instance;
}

// The epilogue's activation as a post-op (none without one).
inline dnnl::primitive_attr epilogue_attributes(Epilogue epilogue) {
  dnnl::primitive_attr attributes;
  dnnl::post_ops ops;
  if (epilogue == Epilogue::gelu || epilogue == Epilogue::bias_gelu) {
    ops.append_eltwise(dnnl::algorithm::eltwise_gelu_tanh, 0.0f, 0.0f);
  } else if (epilogue == Epilogue::relu || epilogue == Epilogue::bias_relu) {
    ops.append_eltwise(dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  }
  attributes.set_post_ops(ops);
  return attributes;
}

// The primitive of this shape (nullptr where this CPU has none for these types).
inline dnnl::matmul* primitive(dnnl::memory::data_type in, dnnl::memory::data_type out,
                               int64_t m, int64_t k, int64_t n, Epilogue epilogue) {
  using tag = dnnl::memory::format_tag;
  Engine& e = engine();
  auto key = std::make_tuple(static_cast<int>(in), static_cast<int>(out), m, k, n, epilogue);
  auto found = e.primitives.find(key);
  if (found != e.primitives.end()) return found->second.get();
  std::unique_ptr<dnnl::matmul> made;
  try {
    const dnnl::memory::desc bias =
        adds_bias(epilogue) ? dnnl::memory::desc({1, n}, out, tag::ab) : dnnl::memory::desc();
    dnnl::matmul::primitive_desc pd(e.engine, {{m, k}, in, tag::ab}, {{k, n}, in, tag::ab},
                                    bias, {{m, n}, out, tag::ab},
                                    epilogue_attributes(epilogue));
    made = std::make_unique<dnnl::matmul>(pd);
  } catch (const dnnl::error& error) {
    if (error.status != dnnl_unimplemented) throw;
  }
  return e.primitives.emplace(key, std::move(made)).first->second.get();
}

// Runs C = epilogue(A x B) with oneDNN; false where it has no primitive for these types
// here.
inline bool run(dnnl::memory::data_type in, dnnl::memory::data_type out, const void* a,
                const void* b, void* c, int64_t m, int64_t k, int64_t n, Epilogue epilogue,
                const void* bias) {
  using tag = dnnl::memory::format_tag;
  Engine& e = engine();
  std::lock_guard<std::mutex> hold(e.mutex);
  dnnl::matmul* prim = primitive(in, out, m, k, n, epilogue);
  if (prim == nullptr) return false;
  dnnl::memory ma({{m, k}, in, tag::ab}, e.engine, const_cast<void*>(a));
  dnnl::memory mb({{k, n}, in, tag::ab}, e.engine, const_cast<void*>(b));
  dnnl::memory mc({{m, n}, out, tag::ab}, e.engine, c);
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}};
  if (adds_bias(epilogue)) {
    args.emplace(DNNL_ARG_BIAS,
                 dnnl::memory({{1, n}, out, tag::ab}, e.engine, const_cast<void*>(bias)));
  }
  prim->execute(e.stream, args);
  e.stream.wait();
  return true;
}

template <typename T>
std::vector<float> widened(const T* values, int64_t count) {
  std::vector<float> out(static_cast<size_t>(count));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < count; ++i) out[i] = static_cast<float>(values[i]);
  return out;
}

// C = epilogue(wide), the f32 sums of a product of n columns rounded once to C.
template <typename C>
void store_with_epilogue(const float* wide, C* c, int64_t count, int64_t n, Epilogue epilogue,
                         const C* bias) {
  for (int64_t i = 0; i < count; ++i) c[i] = C(apply_epilogue(epilogue, wide[i], bias, i % n));
}

}  // namespace gemm

inline void matmul(const double* a, const double* b, double* c, int64_t m, int64_t k, int64_t n) {
  count_matmul(m, k, n);
  blocked_matmul(a, b, c, m, k, n);
}

// TA is float, bf16 or f16; TC is TA or float; `bias` (of n elements) for the bias
// epilogues.
template <typename TA, typename TC>
void matmul(const TA* a, const TA* b, TC* c, int64_t m, int64_t k, int64_t n,
            Epilogue epilogue = Epilogue::none,
            const typename NotDeduced<TC>::type* bias = nullptr) {
  static_assert(std::is_same_v<TC, TA> || std::is_same_v<TC, float>,
                "a matmul writes its operands' type or float");
  count_matmul(m, k, n);
  if (m == 0 || n == 0) return;
  if (k == 0) {  // oneDNN leaves C as it was
    const std::vector<float> zeros(static_cast<size_t>(m * n), 0.0f);
    return gemm::store_with_epilogue(zeros.data(), c, m * n, n, epilogue, bias);
  }
  if (gemm::run(gemm::dnnl_type<TA>(), gemm::dnnl_type<TC>(), a, b, c, m, k, n, epilogue, bias)) {
    return;
  }
  if constexpr (std::is_same_v<TA, float>) {
    throw std::runtime_error("oneDNN has no f32 matmul on this CPU");
  } else {
    const std::vector<float> wa = gemm::widened(a, m * k), wb = gemm::widened(b, k * n);
    std::vector<float> wide(static_cast<size_t>(m * n));
    // an f32 product of the same shape, not counted again (matmul_flops: once a matmul)
    const auto f32 = gemm::dnnl_type<float>();
    if (!gemm::run(f32, f32, wa.data(), wb.data(), wide.data(), m, k, n, Epilogue::none, nullptr))
      throw std::runtime_error("oneDNN has no f32 matmul on this CPU");
    gemm::store_with_epilogue(wide.data(), c, m * n, n, epilogue, bias);
  }
}

}  // namespace parafuse::ccn
