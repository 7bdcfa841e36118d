// Storage types of .ccn values in device code (ccn/half.hpp picks them): CUDA's __half
// and __nv_bfloat16 (round to nearest even, usable on host and device). The host code
// of a CUDA project uses ccn/cpu/half.hpp; both are the same 16-bit bit patterns.
#pragma once
#include "ccn/namespace.hpp"
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "ccn/host_device.hpp"

namespace parafuse::ccn {

using f16 = __half;
using bf16 = __nv_bfloat16;

template <typename T> struct compute { using type = T; };
template <> struct compute<f16> { using type = float; };
template <> struct compute<bf16> { using type = float; };
template <typename T> using compute_t = typename compute<T>::type;

// Round a computed value to storage type T and hold it in T's compute type again.
template <typename T, typename V>
PF_HOST_DEVICE inline compute_t<T> round_to(V value) {
  return static_cast<compute_t<T>>(static_cast<T>(static_cast<compute_t<T>>(value)));
}

template <typename T, typename V>
PF_HOST_DEVICE inline T store_as(V value) {
  return static_cast<T>(static_cast<compute_t<T>>(value));
}

}  // namespace parafuse::ccn
