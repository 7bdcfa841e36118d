// Storage types of .ccn values in a CUDA project. Code compiled by nvcc stores f16 and
// bf16 as CUDA's __half and __nv_bfloat16 (round to nearest even, usable on host and
// device); code compiled by the host compiler (the runner) uses the CPU backend's
// types from half_cpu.hpp. Both are 16-bit IEEE half and bfloat16 bit patterns.
#pragma once
#if defined(__CUDACC__) || defined(PF_CUDA_EMULATION)
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#ifndef PF_HOST_DEVICE
#define PF_HOST_DEVICE __host__ __device__
#endif

namespace pf {

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

}  // namespace pf
#else
#include "half_cpu.hpp"
#endif
