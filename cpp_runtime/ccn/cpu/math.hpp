// Element-wise functions with numpy's meaning (NaN-propagating max/min, tanh-form gelu).
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace pf {

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
template <typename T> inline T gelu(T x) {
  const T k = static_cast<T>(0.7978845608028654);
  return T(0.5) * x * (T(1) + std::tanh(k * (x + static_cast<T>(0.044715) * x * x * x)));
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

}  // namespace pf
