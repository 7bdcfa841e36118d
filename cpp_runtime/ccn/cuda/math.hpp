// Element-wise functions with numpy's meaning (NaN-propagating max/min, tanh-form gelu),
// callable from host and device code (the CUDA counterpart of ccn/cpu/math.hpp).
#pragma once
#include "ccn/namespace.hpp"
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "ccn/host_device.hpp"

namespace parafuse::ccn {

using std::exp;
using std::fabs;
using std::isnan;
using std::pow;
using std::sqrt;
using std::tanh;

template <typename T> PF_HOST_DEVICE inline T maximum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (isnan(a) || isnan(b)) return isnan(a) ? a : b;
  }
  return a > b ? a : b;
}
template <typename T> PF_HOST_DEVICE inline T minimum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (isnan(a) || isnan(b)) return isnan(a) ? a : b;
  }
  return a < b ? a : b;
}
template <typename T> PF_HOST_DEVICE inline T relu(T x) { return maximum(x, T(0)); }
template <typename T> PF_HOST_DEVICE inline T sigmoid(T x) { return T(1) / (T(1) + exp(-x)); }
template <typename T> PF_HOST_DEVICE inline T rsqrt(T x) { return T(1) / sqrt(x); }
template <typename T> PF_HOST_DEVICE inline T gelu(T x) {
  const T k = static_cast<T>(0.7978845608028654);
  return T(0.5) * x * (T(1) + tanh(k * (x + static_cast<T>(0.044715) * x * x * x)));
}
template <typename T> PF_HOST_DEVICE inline T power(T a, T c) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(pow(static_cast<double>(a), static_cast<double>(c)));
  } else {
    return pow(a, c);
  }
}
template <typename T> PF_HOST_DEVICE inline T absolute(T x) {
  if constexpr (std::is_integral_v<T>) return x < 0 ? -x : x;
  else return fabs(x);
}

}  // namespace parafuse::ccn
