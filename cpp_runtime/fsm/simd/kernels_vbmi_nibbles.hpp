// parafuse boostfsm runtime: the AVX-512 VBMI kernel of SIMD enumeration (fsm/simd/kernels.hpp)
// for machines of 17 to 64 states with 2 to 4 groups of reporting states, counted as on
// the paired AVX2 kernel (fsm/simd/kernels_paired.hpp): two groups share one 8-bit counter
// per lane, one in each nibble, and a vpermb of a per-state weight table (0x01: at or
// above group 2a's first state, 0x10: at or above group 2a + 1's) gives both increments,
// so one add counts both; an odd last group by a compare into a mask and a masked add.
// The nibbles are split into 8-bit counters every kNibbleSteps bytes, those widened every
// kSimdFlush. (Measured on a Zen 4, thread CPU time: 40 states with 3 groups run 0.99 GB/s
// per core, against 0.79 with a compare and a masked add per group and 0.95 for a pass
// without counts and a recount from the true starts; past 4 groups, counted so in the
// one pass, 5 groups run 0.68 against the recount's 0.94, so those are recounted.)
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "fsm/simd/kernels_paired.hpp"
#include "fsm/simd/plan.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

namespace parafuse::fsm {
inline namespace v1 {

// The weights of nibble counter a over the plan's (up to 64) states.
inline __attribute__((target("avx512f,avx512bw"))) __m512i vbmi_nibble_weights(const SimdPlan& p, int a,
                                                                              int groups) {
  alignas(64) uint8_t weight[64] = {};
  for (uint32_t s = 0; s < 64 && s < p.states; ++s)
    weight[s] = uint8_t((s >= p.lo[2 * a] ? 0x01 : 0) |
                        (2 * a + 1 < groups && s >= p.lo[2 * a + 1] ? 0x10 : 0));
  return _mm512_load_si512(weight);
}

// lanes[0..K) in lockstep, one register of 64 lanes each; G groups, 2 <= G <= 4.
template <int K, int G>
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void simd_run_vbmi_nibbles(
    const SimdPlan& p, SimdLane* lanes, size_t begin, size_t end) {
  constexpr int A = G / 2;     // nibble counters per chunk: groups 0 .. 2A - 1
  constexpr bool odd = G % 2;  // group G - 1 by compare and masked add
  __m512i v[K], acc[K][A], weight[A], plain[K];
  const __m512i low = _mm512_set1_epi8(0x0F), one = _mm512_set1_epi8(1);
  const __m512i floor = _mm512_set1_epi8(char(int(p.lo[G - 1]) - 1));
  alignas(64) uint8_t counted[K][G][64];  // 8-bit counts since the last widening
  const uint8_t* data[K];
  const uint8_t* const next = p.next;
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k) v[k] = _mm512_load_si512(lanes[k].state), data[k] = lanes[k].data;
#pragma GCC unroll 4
  for (int a = 0; a < A; ++a) weight[a] = vbmi_nibble_weights(p, a, G);
  for (size_t b = begin; b < end; b += kSimdFlush) {
    const size_t e = std::min(end, b + kSimdFlush);
    std::memset(counted, 0, sizeof counted);
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k) plain[k] = _mm512_setzero_si512();
    for (size_t n = b; n < e; n += kNibbleSteps) {
      const size_t m = std::min(e, n + kNibbleSteps);
#pragma GCC unroll 4
      for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
        for (int a = 0; a < A; ++a) acc[k][a] = _mm512_setzero_si512();
      for (size_t i = n; i < m; ++i) {
#pragma GCC unroll 4
        for (int k = 0; k < K; ++k) {
          v[k] = _mm512_permutexvar_epi8(v[k], _mm512_load_si512(next + size_t(data[k][i]) * kSimdRowBytes));
#pragma GCC unroll 4
          for (int a = 0; a < A; ++a)
            acc[k][a] = _mm512_add_epi8(acc[k][a], _mm512_permutexvar_epi8(v[k], weight[a]));
          if constexpr (odd)
            plain[k] = _mm512_mask_add_epi8(plain[k], _mm512_cmpgt_epi8_mask(v[k], floor), plain[k], one);
        }
      }
#pragma GCC unroll 4
      for (int k = 0; k < K; ++k)
#pragma GCC unroll 8
        for (int g = 0; g < 2 * A; ++g) {
          const __m512i nibble = g % 2 ? _mm512_srli_epi16(acc[k][g / 2], 4) : acc[k][g / 2];
          __m512i* into = reinterpret_cast<__m512i*>(counted[k][g]);
          _mm512_store_si512(into, _mm512_add_epi8(_mm512_load_si512(into), _mm512_and_si512(nibble, low)));
        }
    }
    if constexpr (odd)
#pragma GCC unroll 4
      for (int k = 0; k < K; ++k) _mm512_store_si512(counted[k][G - 1], plain[k]);
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k)
#pragma GCC unroll 8
      for (int g = 0; g < G; ++g) add_counts(lanes[k].ge + g * kSimdLanes, counted[k][g], p.states);
  }
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k) _mm512_store_si512(lanes[k].state, v[k]);
}

template <int K, int Groups>
void simd_run_vbmi_counted(const SimdPlan& p, SimdLane* lanes, int groups, size_t begin, size_t end) {
  switch (groups) {
    case 2: if constexpr (simd_fit_groups(Groups, 2)) simd_run_vbmi_nibbles<K, 2>(p, lanes, begin, end); break;
    case 3: if constexpr (simd_fit_groups(Groups, 3)) simd_run_vbmi_nibbles<K, 3>(p, lanes, begin, end); break;
    default: if constexpr (simd_fit_groups(Groups, 4)) simd_run_vbmi_nibbles<K, 4>(p, lanes, begin, end); break;
  }
}

// `count` chunks (up to 4) of a plan of 17 to 64 states on the VBMI path with 2 to 4
// groups, four in lockstep where there are four.
// `Groups`: the group count it is compiled for (-1: any; fsm/simd/plan.hpp SimdKernels).
template <int Groups>
void simd_summarize_vbmi_counted(const SimdPlan& p, SimdLane* lanes, int count, int groups) {
  simd_in_lockstep(lanes, count, 4, [&](auto k, SimdLane* some, size_t begin, size_t end) {
    simd_run_vbmi_counted<decltype(k)::value, Groups>(p, some, groups, begin, end);
  });
}

}  // namespace v1
}  // namespace parafuse::fsm

#endif  // __x86_64__
