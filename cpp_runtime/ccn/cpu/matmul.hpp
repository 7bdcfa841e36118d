// C[M, N] = A[M, K] x B[K, N], row-major, accumulated in f32 (f64 for f64), by oneDNN's
// matmul primitive (the onednn-cpu-gomp wheel; OpenMP threads, like the rest of the step):
//   float x float -> float, bf16 x bf16 -> bf16 or float, f16 x f16 -> f16 or float,
//   double x double -> double (the blocked kernel: oneDNN has no f64 GEMM).
// A 16-bit result is rounded once from the f32 sum (round to nearest even), the rounding
// point of docs/ccn-language.md section 4. Where this CPU has no f16 GEMM (oneDNN needs
// AVX512-FP16 or AMX-FP16), f16 operands are widened to float, which is exact, and
// multiplied in f32. Primitives are created once per shape and kept.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "ccn/cpu/blocked_matmul.hpp"
#include "ccn/cpu/half.hpp"

namespace pf {

namespace gemm {

template <typename T> constexpr dnnl::memory::data_type dnnl_type();
template <> constexpr dnnl::memory::data_type dnnl_type<float>() { return dnnl::memory::data_type::f32; }
template <> constexpr dnnl::memory::data_type dnnl_type<bf16>() { return dnnl::memory::data_type::bf16; }
template <> constexpr dnnl::memory::data_type dnnl_type<f16>() { return dnnl::memory::data_type::f16; }

struct Engine {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::mutex mutex;
  // (input type, output type, M, K, N) -> the primitive, or none where oneDNN has none
  std::map<std::tuple<int, int, int64_t, int64_t, int64_t>, std::unique_ptr<dnnl::matmul>>
      primitives;
};

inline Engine& engine() {
  static Engine instance;
  return instance;
}

// The primitive of this shape (nullptr where this CPU has none for these types).
inline dnnl::matmul* primitive(dnnl::memory::data_type in, dnnl::memory::data_type out,
                               int64_t m, int64_t k, int64_t n) {
  using tag = dnnl::memory::format_tag;
  Engine& e = engine();
  auto key = std::make_tuple(static_cast<int>(in), static_cast<int>(out), m, k, n);
  auto found = e.primitives.find(key);
  if (found != e.primitives.end()) return found->second.get();
  std::unique_ptr<dnnl::matmul> made;
  try {
    dnnl::matmul::primitive_desc pd(e.engine, {{m, k}, in, tag::ab}, {{k, n}, in, tag::ab},
                                    {{m, n}, out, tag::ab});
    made = std::make_unique<dnnl::matmul>(pd);
  } catch (const dnnl::error& error) {
    if (error.status != dnnl_unimplemented) throw;
  }
  return e.primitives.emplace(key, std::move(made)).first->second.get();
}

// Runs C = A x B with oneDNN; false where it has no primitive for these types here.
inline bool run(dnnl::memory::data_type in, dnnl::memory::data_type out, const void* a,
                const void* b, void* c, int64_t m, int64_t k, int64_t n) {
  using tag = dnnl::memory::format_tag;
  Engine& e = engine();
  std::lock_guard<std::mutex> hold(e.mutex);
  dnnl::matmul* prim = primitive(in, out, m, k, n);
  if (prim == nullptr) return false;
  dnnl::memory ma({{m, k}, in, tag::ab}, e.engine, const_cast<void*>(a));
  dnnl::memory mb({{k, n}, in, tag::ab}, e.engine, const_cast<void*>(b));
  dnnl::memory mc({{m, n}, out, tag::ab}, e.engine, c);
  prim->execute(e.stream, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
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

template <typename C>
void fill_zero(C* c, int64_t count) {
  for (int64_t i = 0; i < count; ++i) c[i] = C(0.0f);
}

}  // namespace gemm

inline void matmul(const double* a, const double* b, double* c, int64_t m, int64_t k, int64_t n) {
  blocked_matmul(a, b, c, m, k, n);
}

// TA is float, bf16 or f16; TC is TA or float.
template <typename TA, typename TC>
void matmul(const TA* a, const TA* b, TC* c, int64_t m, int64_t k, int64_t n) {
  static_assert(std::is_same_v<TC, TA> || std::is_same_v<TC, float>,
                "a matmul writes its operands' type or float");
  if (m == 0 || n == 0) return;
  if (k == 0) return gemm::fill_zero(c, m * n);  // oneDNN leaves C as it was
  if (gemm::run(gemm::dnnl_type<TA>(), gemm::dnnl_type<TC>(), a, b, c, m, k, n)) return;
  if constexpr (std::is_same_v<TA, float>) {
    throw std::runtime_error("oneDNN has no f32 matmul on this CPU");
  } else {
    const std::vector<float> wa = gemm::widened(a, m * k), wb = gemm::widened(b, k * n);
    if constexpr (std::is_same_v<TC, float>) {
      matmul(wa.data(), wb.data(), c, m, k, n);
    } else {
      std::vector<float> wide(static_cast<size_t>(m * n));
      matmul(wa.data(), wb.data(), wide.data(), m, k, n);
      for (int64_t i = 0; i < m * n; ++i) c[i] = TC(wide[i]);
    }
  }
}

}  // namespace pf
