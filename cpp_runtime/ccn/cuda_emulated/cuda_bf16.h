// CUDA's __nv_bfloat16 for the emulated device: the top 16 bits of a float, rounded to
// nearest even (NaN stays NaN); from double through float rounded to odd, so that the
// result is the correctly rounded one, as __double2bfloat16's.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "ccn/cuda_emulated/cuda_runtime.h"  // __host__, __device__

struct __nv_bfloat16 {
  uint16_t __x = 0;
  __nv_bfloat16() = default;
  __nv_bfloat16(float value) : __x(from_float(value)) {}
  __nv_bfloat16(double value) : __x(from_float(to_odd_float(value))) {}
  operator float() const {
    uint32_t word = static_cast<uint32_t>(__x) << 16;
    float out;
    std::memcpy(&out, &word, 4);
    return out;
  }

 private:
  static uint16_t from_float(float value) {
    uint32_t word;
    std::memcpy(&word, &value, 4);
    if ((word & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((word >> 16) | 0x40u);
    return static_cast<uint16_t>((word + 0x7fffu + ((word >> 16) & 1u)) >> 16);
  }
  // double -> float, rounded toward zero with the lost bits kept as the last bit.
  static float to_odd_float(double value) {
    float near = static_cast<float>(value);
    if (std::isnan(value) || std::isinf(near) || static_cast<double>(near) == value) return near;
    uint32_t word;
    std::memcpy(&word, &near, 4);
    if (std::fabs(static_cast<double>(near)) > std::fabs(value)) --word;  // toward zero
    word |= 1u;
    float out;
    std::memcpy(&out, &word, 4);
    return out;
  }
};
static_assert(sizeof(__nv_bfloat16) == 2, "__nv_bfloat16 is two bytes");

inline __nv_bfloat16 __float2bfloat16(float value) { return __nv_bfloat16(value); }
inline float __bfloat162float(__nv_bfloat16 value) { return static_cast<float>(value); }
