// CUDA's __half for the emulated device: IEEE binary16 bits, converted with the host
// compiler's _Float16 (round to nearest even, from float and directly from double, as
// __float2half_rn and __double2half round).
#pragma once
#include <cstdint>
#include <cstring>

#include "ccn/cuda_emulated/cuda_runtime.h"  // __host__, __device__

struct __half {
  uint16_t __x = 0;
  __half() = default;
  __half(float value) { store(static_cast<_Float16>(value)); }
  __half(double value) { store(static_cast<_Float16>(value)); }
  operator float() const {
    _Float16 h;
    std::memcpy(&h, &__x, 2);
    return static_cast<float>(h);
  }

 private:
  void store(_Float16 h) { std::memcpy(&__x, &h, 2); }
};
static_assert(sizeof(__half) == 2, "__half is two bytes");

inline __half __float2half_rn(float value) { return __half(value); }
inline __half __float2half(float value) { return __half(value); }
inline float __half2float(__half value) { return static_cast<float>(value); }
