// Element-wise functions with numpy's meaning (NaN-propagating max/min, tanh-form gelu).
#pragma once
#include "ccn/namespace.hpp"
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace parafuse::ccn {

template <typename T> inline T maximum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
  }
  return a > b ? a : b;
}
template <typename T> inline T minimum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
  }
  return a < b ? a : b;
}
template <typename T> inline T relu(T x) { return maximum(x, T(0)); }
template <typename T> inline T sigmoid(T x) { return T(1) / (T(1) + std::exp(-x)); }
template <typename T> inline T rsqrt(T x) { return T(1) / std::sqrt(x); }

// exp(y) for y <= 0 in float, branch-free so that loops calling it vectorise (libm's
// expf and tanhf are calls the compiler cannot vectorise without -ffast-math): Cody-Waite
// reduction y = n ln2 + r, |r| <= ln2/2 (or a little more), and Cephes' degree-6 polynomial for exp(r)
// (about 1 ulp); below -87 it returns exp(-87) (about 1.6e-38) instead of underflowing.
inline float exp_nonpositive(float y) {
  y = y < -87.0f ? -87.0f : y;
  // n = round(y / ln2) by adding and subtracting 1.5 * 2^23 (std::floor would not vectorise)
  const float shifter = 12582912.0f;
  const float n = (y * 1.44269504088896341f + shifter) - shifter;
  const float r = (y - n * 0.693359375f) + n * 2.12194440e-4f;
  const float z = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * z + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

// exp(x - max) of a softmax row (<= 0, or NaN where the row holds NaN or is all -inf): in
// float the vectorised exp_nonpositive, 0 below -87 (a masked -inf gives exactly 0, as in
// PyTorch; e^-87 is below float's normal range), NaN kept; libm's exp in double.
template <typename W> inline W softmax_exp(W y) {
  if constexpr (std::is_same_v<W, float>) {
    return y < -87.0f ? 0.0f : exp_nonpositive(y);
  } else {
    return std::exp(y);
  }
}

// gelu(x) = 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3),
// written with e = exp(-2|u|) <= 1 as x / (1 + e) (u >= 0) or x e / (1 + e) (u < 0): no
// cancellation in 1 + tanh(u), a few ulp everywhere, and no call that stops
// vectorisation. gelu(-inf) is NaN, as the tanh form gives (-inf * 0).
inline float gelu_f32(float x) {
  const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  const float e = exp_nonpositive(-2.0f * std::fabs(u));
  const float value = x * (u >= 0.0f ? 1.0f : e) / (1.0f + e);
  return x == -std::numeric_limits<float>::infinity()
             ? std::numeric_limits<float>::quiet_NaN() : value;
}

template <typename T> inline T gelu(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return gelu_f32(x);
  } else {
    const T k = static_cast<T>(0.7978845608028654);
    return T(0.5) * x * (T(1) + std::tanh(k * (x + static_cast<T>(0.044715) * x * x * x)));
  }
}
template <typename T> inline T power(T a, T c) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(std::pow(static_cast<double>(a), static_cast<double>(c)));
  } else {
    return std::pow(a, c);
  }
}
template <typename T> inline T absolute(T x) {
  if constexpr (std::is_integral_v<T>) return x < 0 ? -x : x;
  else return std::fabs(x);
}

}  // namespace parafuse::ccn
