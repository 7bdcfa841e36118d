// Checks pf::f16 and pf::bf16 (cpp_runtime/ccn/cpu/half.hpp) against the compiler's
// _Float16 and a plain round-to-nearest-even bfloat16, over every f16 pattern and
// every float pattern with a stride (argv[1]). Prints "ok" or the first mismatches.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ccn/cpu/half.hpp"

template <typename A, typename B> static A bits_of(B value) {
  A out;
  std::memcpy(&out, &value, sizeof out);
  return out;
}

static uint16_t bf16_reference(float value) {
  uint32_t word = bits_of<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((word >> 16) | 0x40u);
  uint64_t rounded = word + 0x7fffull + ((word >> 16) & 1u);
  return static_cast<uint16_t>(rounded >> 16);
}

int main(int argc, char** argv) {
  const uint64_t stride = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1;
  long bad = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    _Float16 native = bits_of<_Float16>(static_cast<uint16_t>(h));
    float expected = static_cast<float>(native), actual = pf::f16::to_float(static_cast<uint16_t>(h));
    bool same = bits_of<uint32_t>(expected) == bits_of<uint32_t>(actual) ||
                (std::isnan(expected) && std::isnan(actual));
    if (!same && bad++ < 5) std::printf("f16 %04x -> float: %g, expected %g\n", h, actual, expected);
  }
  for (uint64_t w = 0; w < (1ull << 32); w += stride) {
    float value = bits_of<float>(static_cast<uint32_t>(w));
    uint16_t expected = bits_of<uint16_t>(static_cast<_Float16>(value));
    uint16_t actual = pf::f16::from_float(value);
    bool nan = std::isnan(value);
    if (nan ? (actual & 0x7e00u) != 0x7e00u || (actual ^ (w >> 16)) & 0x8000u : actual != expected) {
      if (bad++ < 5) std::printf("float %08llx -> f16: %04x, expected %04x\n",
                                 static_cast<unsigned long long>(w), actual, expected);
    }
    uint16_t bf = pf::bf16::from_float(value);
    if (bf != bf16_reference(value) && bad++ < 5) {
      std::printf("float %08llx -> bf16: %04x, expected %04x\n",
                  static_cast<unsigned long long>(w), bf, bf16_reference(value));
    }
  }
  std::printf(bad ? "%ld mismatches\n" : "ok\n", bad);
  return bad ? 1 : 0;
}
