// Checks the CPU softmax's exp (pf::softmax_exp, cpp_runtime/ccn/cpu/math.hpp) against
// libm's expf over [-87, 0] (at most 2 ulp apart), its edges (below -87 and -inf give 0,
// NaN stays NaN), and pf::softmax_rows on masked rows (a masked -inf gives exactly 0; an
// all-masked row and a row holding NaN give NaN, as PyTorch does). Prints "ok" or what differs.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>

#include "ccn/cpu/norms.hpp"

static int32_t ordered(float x) {
  int32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits < 0 ? INT32_MIN - bits : bits;
}

int main() {
  const float inf = std::numeric_limits<float>::infinity();
  long bad = 0;
  for (int k = 0; k <= 8700000; ++k) {
    const float y = -static_cast<float>(k) * 1e-5f;
    const float got = pf::softmax_exp(y), want = std::exp(y);
    if (std::abs(ordered(got) - ordered(want)) > 2 && bad++ < 5)
      std::printf("exp(%.9g): %.9g, libm %.9g\n", y, got, want);
  }
  if (pf::softmax_exp(-88.0f) != 0.0f || pf::softmax_exp(-inf) != 0.0f ||
      !std::isnan(pf::softmax_exp(std::nanf(""))) || pf::softmax_exp(0.0f) != 1.0f) {
    std::printf("edges: %g %g %g %g\n", pf::softmax_exp(-88.0f), pf::softmax_exp(-inf),
                pf::softmax_exp(std::nanf("")), pf::softmax_exp(0.0f));
    ++bad;
  }
  float rows[9] = {1.0f, -inf, 2.0f, -inf, -inf, -inf, 0.5f, std::nanf(""), 0.0f};
  pf::softmax_rows(rows, 9, 3);
  const bool masked = rows[1] == 0.0f && std::abs(rows[0] + rows[2] - 1.0f) < 1e-6f;
  const bool all_masked = std::isnan(rows[3]) && std::isnan(rows[4]) && std::isnan(rows[5]);
  const bool with_nan = std::isnan(rows[6]) && std::isnan(rows[7]) && std::isnan(rows[8]);
  if (!masked || !all_masked || !with_nan) {
    std::printf("rows: %g %g %g | %g %g %g | %g %g %g\n", rows[0], rows[1], rows[2], rows[3],
                rows[4], rows[5], rows[6], rows[7], rows[8]);
    ++bad;
  }
  std::printf(bad ? "%ld mismatches\n" : "ok\n", bad);
  return bad ? 1 : 0;
}
