// Microbenchmark of GEMM libraries for the CPU backend's matmul, one thread:
// C[M, N] = A[M, K] x B[K, N], row-major, f32 accumulation; bf16/f16 inputs are
// either given to the library as they are, or widened to f32 first.
// Build: bench/gemm/run_candidates.sh (it finds the wheels).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "ccn/cpu/blocked_matmul.hpp"
#include "ccn/half.hpp"
#ifdef HAVE_OPENBLAS
#include <cblas.h>
#endif
#ifdef HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

using Clock = std::chrono::steady_clock;

static double median_ms(const std::function<void()>& fn, int reps) {
  fn();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    fn();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

#ifdef HAVE_DNNL
static dnnl::engine& eng() { static dnnl::engine e(dnnl::engine::kind::cpu, 0); return e; }
static double dnnl_ms(dnnl::memory::data_type dt, dnnl::memory::data_type out, int64_t m,
                      int64_t k, int64_t n, int reps) {
  using namespace dnnl;
  using tag = memory::format_tag;
  memory::desc a({m, k}, dt, tag::ab), b({k, n}, dt, tag::ab), c({m, n}, out, tag::ab);
  try {
    matmul::primitive_desc pd(eng(), a, b, c);
    matmul prim(pd);
    memory ma(a, eng()), mb(b, eng()), mc(c, eng());
    std::memset(ma.get_data_handle(), 0, a.get_size());
    std::memset(mb.get_data_handle(), 0, b.get_size());
    stream s(eng());
    std::printf(" [%s]", pd.impl_info_str());
    return median_ms([&] {
      prim.execute(s, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
      s.wait();
    }, reps);
  } catch (const dnnl::error& e) {
    std::printf(" [unsupported: %s]", e.what());
    return -1;
  }
}
#endif

int main(int argc, char** argv) {
  struct Shape { int64_t m, k, n; const char* what; };
  std::vector<Shape> shapes = {
      {24, 5, 7, "megatron sample (tests)"},
      {256, 1024, 2048, "MLP W1 per rank (2 ranks)"},
      {256, 2048, 1024, "MLP W2 per rank (2 ranks)"},
      {256, 1024, 4096, "MLP W1 whole (1 rank)"},
  };
  const int reps = argc > 1 ? std::atoi(argv[1]) : 7;
  for (const auto& s : shapes) {
    const double gflop = 2.0 * s.m * s.k * s.n / 1e9;
    std::printf("== M=%ld K=%ld N=%ld (%s), %.3f GFLOP\n", (long)s.m, (long)s.k, (long)s.n,
                s.what, gflop);
    std::vector<float> a(s.m * s.k, 0.5f), b(s.k * s.n, 0.25f), c(s.m * s.n);
    std::vector<pf::bf16> a16(a.size()), b16(b.size());
    auto report = [&](const char* name, double ms) {
      if (ms > 0) std::printf("  %-34s %9.3f ms  %7.1f GFLOP/s\n", name, ms, gflop / ms * 1e3);
      else std::printf("  %-34s unsupported\n", name);
    };
    report("hand-written blocked f32", median_ms([&] {
      pf::blocked_matmul(a.data(), b.data(), c.data(), s.m, s.k, s.n); }, reps));
    std::vector<float> wa(a.size()), wb(b.size());
    report("hand-written, bf16 widened", median_ms([&] {
      for (size_t i = 0; i < a.size(); ++i) wa[i] = static_cast<float>(a16[i]);
      for (size_t i = 0; i < b.size(); ++i) wb[i] = static_cast<float>(b16[i]);
      pf::blocked_matmul(wa.data(), wb.data(), c.data(), s.m, s.k, s.n); }, reps));
#ifdef HAVE_OPENBLAS
    report("OpenBLAS sgemm f32", median_ms([&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.f, a.data(), s.k,
                  b.data(), s.n, 0.f, c.data(), s.n); }, reps));
    report("OpenBLAS sgemm, bf16 widened", median_ms([&] {
      for (size_t i = 0; i < a.size(); ++i) wa[i] = static_cast<float>(a16[i]);
      for (size_t i = 0; i < b.size(); ++i) wb[i] = static_cast<float>(b16[i]);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.f, wa.data(), s.k,
                  wb.data(), s.n, 0.f, c.data(), s.n); }, reps));
#endif
#ifdef HAVE_DNNL
    using dt = dnnl::memory::data_type;
    std::printf("  oneDNN f32:");
    report("", dnnl_ms(dt::f32, dt::f32, s.m, s.k, s.n, reps));
    std::printf("  oneDNN bf16->bf16:");
    report("", dnnl_ms(dt::bf16, dt::bf16, s.m, s.k, s.n, reps));
    std::printf("  oneDNN bf16->f32:");
    report("", dnnl_ms(dt::bf16, dt::f32, s.m, s.k, s.n, reps));
    std::printf("  oneDNN f16->f16:");
    report("", dnnl_ms(dt::f16, dt::f16, s.m, s.k, s.n, reps));
#endif
  }
}
