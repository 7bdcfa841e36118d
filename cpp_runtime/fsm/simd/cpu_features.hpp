// parafuse boostfsm runtime: which vector instruction sets this CPU offers, asked at run
// time (cpuid through __builtin_cpu_supports), so that one build runs everywhere: the
// kernels that need an instruction set carry it as a per-function target attribute
// (fsm/simd/kernels.hpp), never as a flag of the whole build (-march=native).
//
// RunOptions::simd, else the environment variable PARAFUSE_FSM_SIMD, forces a path of SIMD enumeration:
// auto (the default: the best the CPU has), none (the scalar enumeration that merges
// paths), scalar (the lane-per-state enumeration in plain C++), ssse3, avx2, avx512vl (the
// paired kernels of up to 16 states on AVX-512 BW/VL: 32 vector registers), avx512vbmi.
#pragma once

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace parafuse::fsm {
inline namespace v1 {

enum class SimdPath { none, scalar, ssse3, avx2, avx512vl, avx512vbmi };

inline const char* simd_path_name(SimdPath path) {
  switch (path) {
    case SimdPath::none: return "none";
    case SimdPath::scalar: return "scalar";
    case SimdPath::ssse3: return "ssse3";
    case SimdPath::avx2: return "avx2";
    case SimdPath::avx512vl: return "avx512vl";
    case SimdPath::avx512vbmi: return "avx512vbmi";
  }
  return "none";
}

// Whether this CPU runs `path` (none and scalar run everywhere).
inline bool cpu_supports(SimdPath path) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  switch (path) {
    case SimdPath::ssse3: return __builtin_cpu_supports("ssse3");
    case SimdPath::avx2: return __builtin_cpu_supports("avx2");
    case SimdPath::avx512vl:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
    case SimdPath::avx512vbmi:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vbmi");
    default: return true;
  }
#else
  return path == SimdPath::none || path == SimdPath::scalar;
#endif
}

// The most capable path of this CPU.
inline SimdPath best_cpu_path() {
  for (SimdPath path : {SimdPath::avx512vbmi, SimdPath::avx512vl, SimdPath::avx2, SimdPath::ssse3})
    if (cpu_supports(path)) return path;
  return SimdPath::scalar;
}

struct SimdRequest {
  bool forced = false;  // PARAFUSE_FSM_SIMD names a path
  SimdPath path = SimdPath::none;
};

// What `option` (else PARAFUSE_FSM_SIMD) asks for; throws std::invalid_argument for an
// unknown name or a path this CPU lacks (a forced path never falls back silently).
inline SimdRequest simd_request(const std::string& option) {
  const char* text = std::getenv("PARAFUSE_FSM_SIMD");
  const std::string value = !option.empty() ? option : text ? text : "";
  if (value.empty() || value == "auto") return SimdRequest{};
  for (SimdPath path : {SimdPath::none, SimdPath::scalar, SimdPath::ssse3, SimdPath::avx2,
                        SimdPath::avx512vl, SimdPath::avx512vbmi}) {
    if (value != simd_path_name(path)) continue;
    if (!cpu_supports(path))
      throw std::invalid_argument("SIMD path " + value + ": this CPU lacks " + value);
    return SimdRequest{true, path};
  }
  throw std::invalid_argument("unknown SIMD path '" + value +
                              "' (paths are auto, none, scalar, ssse3, avx2, avx512vl, avx512vbmi)");
}

}  // namespace v1
}  // namespace parafuse::fsm
