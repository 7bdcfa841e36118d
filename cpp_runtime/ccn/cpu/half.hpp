// Storage types of .ccn values: f16 (IEEE binary16) and bf16 (bfloat16), both held as
// 16-bit patterns and converted from float with round-to-nearest-even. Arithmetic on
// both is done in float (docs/ccn-language.md section 4); these types only store.
//
// The conversions are branch-free integer and float arithmetic rather than the
// compiler's _Float16: GCC 12 does not vectorise loops that load or store _Float16,
// while these loops vectorise like float loops (F16C is not needed). They are exact:
// f16 -> float for all 65536 patterns, float -> f16 equal to a correctly rounded
// conversion for every non-NaN float (NaN becomes a quiet NaN with the sign kept).
#pragma once
#include "ccn/namespace.hpp"
#include <cstdint>
#include <cstring>

namespace parafuse::ccn {

namespace half_bits {
inline uint32_t of(float value) {
  uint32_t word;
  std::memcpy(&word, &value, sizeof word);
  return word;
}
inline float to_float(uint32_t word) {
  float value;
  std::memcpy(&value, &word, sizeof value);
  return value;
}
// a if `pick` else b, without a branch.
inline uint32_t select(bool pick, uint32_t a, uint32_t b) {
  uint32_t mask = 0u - static_cast<uint32_t>(pick);
  return (a & mask) | (b & ~mask);
}
}  // namespace half_bits

struct f16 {
  uint16_t bits = 0;
  f16() = default;
  explicit f16(float value) : bits(from_float(value)) {}
  explicit f16(double value) : f16(static_cast<float>(value)) {}
  operator float() const { return to_float(bits); }

  // Shift exponent and mantissa into place and rebias by multiplying with 2^112, which
  // also normalises subnormals exactly; infinities and NaNs get the all-ones exponent.
  static float to_float(uint16_t half) {
    using namespace half_bits;
    uint32_t magnitude = half & 0x7fffu;
    uint32_t word = of(half_bits::to_float(magnitude << 13) * 0x1p112f);
    word |= select(magnitude >= 0x7c00u, 0x7f800000u, 0u);
    return half_bits::to_float(word | (static_cast<uint32_t>(half & 0x8000u) << 16));
  }

  static uint16_t from_float(float value) {
    using namespace half_bits;
    uint32_t word = of(value);
    uint32_t sign = (word >> 16) & 0x8000u;
    uint32_t magnitude = word & 0x7fffffffu;
    // Below 2^-14 the result is subnormal: adding 0.5 (as 2^-1 with the mantissa
    // aligned to f16's last subnormal bit) lets the float adder round to nearest even.
    const uint32_t subnormal_magic = (127u - 15u + 23u - 10u + 1u) << 23;
    uint32_t subnormal =
        of(half_bits::to_float(magnitude) + half_bits::to_float(subnormal_magic)) - subnormal_magic;
    // Normal: rebias the exponent, add half an ulp minus one plus the kept lsb, truncate.
    uint32_t odd = (magnitude >> 13) & 1u;
    uint32_t normal = (magnitude + ((15u - 127u) << 23) + 0xfffu + odd) >> 13;
    uint32_t out = select(magnitude < (113u << 23), subnormal, normal);
    uint32_t overflow = select(magnitude > 0x7f800000u, 0x7e00u, 0x7c00u);
    out = select(magnitude >= ((127u + 16u) << 23), overflow, out);
    return static_cast<uint16_t>(out | sign);
  }
};
static_assert(sizeof(f16) == 2, "f16 must be two bytes");

struct bf16 {
  uint16_t bits = 0;
  bf16() = default;
  explicit bf16(float value) : bits(from_float(value)) {}
  explicit bf16(double value) : bf16(static_cast<float>(value)) {}
  operator float() const { return half_bits::to_float(static_cast<uint32_t>(bits) << 16); }

  static uint16_t from_float(float value) {
    using namespace half_bits;
    uint32_t word = of(value);
    bool nan = (word & 0x7fffffffu) > 0x7f800000u;
    uint32_t rounded = (word + 0x7fffu + ((word >> 16) & 1u)) >> 16;  // ties to even
    return static_cast<uint16_t>(select(nan, (word >> 16) | 0x0040u, rounded));
  }
};
static_assert(sizeof(bf16) == 2, "bf16 must be two bytes");

// The compute type of a storage type: float for the 16-bit floats, itself otherwise.
template <typename T> struct compute { using type = T; };
template <> struct compute<f16> { using type = float; };
template <> struct compute<bf16> { using type = float; };
template <typename T> using compute_t = typename compute<T>::type;

// Round a computed value to storage type T and hold it in T's compute type again.
template <typename T, typename V>
inline compute_t<T> round_to(V value) {
  return static_cast<compute_t<T>>(static_cast<T>(static_cast<compute_t<T>>(value)));
}

template <typename T, typename V>
inline T store_as(V value) {
  return static_cast<T>(static_cast<compute_t<T>>(value));
}

}  // namespace parafuse::ccn
