// Storage types of .ccn values: f16 is the compiler's _Float16, bf16 is a 16-bit
// bfloat16 with round-to-nearest-even from float. Arithmetic on both is done in
// float (spec 3.2); these types only store.
#pragma once
#include <cstdint>
#include <cstring>

namespace pf {

using f16 = _Float16;

struct bf16 {
  uint16_t bits = 0;
  bf16() = default;
  explicit bf16(float value) { bits = from_float(value); }
  explicit bf16(double value) : bf16(static_cast<float>(value)) {}
  operator float() const {
    uint32_t word = static_cast<uint32_t>(bits) << 16;
    float out;
    std::memcpy(&out, &word, sizeof out);
    return out;
  }
  static uint16_t from_float(float value) {
    uint32_t word;
    std::memcpy(&word, &value, sizeof word);
    if ((word & 0x7f800000u) == 0x7f800000u && (word & 0x007fffffu)) {
      return static_cast<uint16_t>((word >> 16) | 0x0040u);  // quiet NaN
    }
    uint32_t rounding = 0x7fffu + ((word >> 16) & 1u);  // round to nearest, ties to even
    return static_cast<uint16_t>((word + rounding) >> 16);
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

}  // namespace pf
