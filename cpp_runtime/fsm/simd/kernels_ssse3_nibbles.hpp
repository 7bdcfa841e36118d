// parafuse boostfsm runtime: the SSSE3 kernel of SIMD enumeration (fsm/simd/kernels.hpp) for
// machines of up to 16 states with 2 to 4 groups of reporting states, counted as on the
// paired AVX2 kernel (fsm/simd/kernels_paired.hpp) with one chunk per 16-byte register:
// two groups share one 8-bit counter per lane, a pshufb of a per-state weight table giving
// both nibbles' increments, and an odd last group by compare and subtract. The nibbles
// are split into 8-bit counters every kNibbleSteps bytes, those widened every kSimdFlush.
// (Measured on a Zen 4: 12 states with 3 groups run 1.5 GB/s per core, against 1.0 with a
// compare and a subtract per group; past 4 groups, counted so in the one pass, 14 states
// with 5 groups run 10% slower than a pass without counts and a recount from the true
// starts, so those are recounted.)
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

// lanes[0..K) in lockstep; G groups, 2 <= G <= 4.
template <int K, int G>
__attribute__((target("ssse3"))) void simd_run_ssse3_nibbles(const SimdPlan& p, SimdLane* lanes,
                                                             size_t begin, size_t end) {
  constexpr int A = G / 2;     // nibble counters per chunk: groups 0 .. 2A - 1
  constexpr bool odd = G % 2;  // group G - 1 by compare and subtract
  __m128i v[K], acc[K][A], weight[A], plain[K];
  const __m128i low = _mm_set1_epi8(0x0F);
  const __m128i floor = _mm_set1_epi8(char(int(p.lo[G - 1]) - 1));
  alignas(16) uint8_t counted[K][G][16];  // 8-bit counts since the last widening
  const uint8_t* data[K];
  const uint8_t* const next = p.next;
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k)
    v[k] = _mm_load_si128(reinterpret_cast<const __m128i*>(lanes[k].state)), data[k] = lanes[k].data;
  for (int a = 0; a < A; ++a) {
    alignas(16) uint8_t table[16] = {};
    for (uint32_t s = 0; s < 16 && s < p.states; ++s)
      table[s] = uint8_t((s >= p.lo[2 * a] ? 0x01 : 0) |
                         (2 * a + 1 < G && s >= p.lo[2 * a + 1] ? 0x10 : 0));
    weight[a] = _mm_load_si128(reinterpret_cast<const __m128i*>(table));
  }
  for (size_t b = begin; b < end; b += kSimdFlush) {
    const size_t e = std::min(end, b + kSimdFlush);
    std::memset(counted, 0, sizeof counted);
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k) plain[k] = _mm_setzero_si128();
    for (size_t n = b; n < e; n += kNibbleSteps) {
      const size_t m = std::min(e, n + kNibbleSteps);
#pragma GCC unroll 4
      for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
        for (int a = 0; a < A; ++a) acc[k][a] = _mm_setzero_si128();
      for (size_t i = n; i < m; ++i) {
#pragma GCC unroll 4
        for (int k = 0; k < K; ++k) {
          v[k] = _mm_shuffle_epi8(
              _mm_load_si128(reinterpret_cast<const __m128i*>(next + size_t(data[k][i]) * kSimdRowBytes)),
              v[k]);
#pragma GCC unroll 4
          for (int a = 0; a < A; ++a) acc[k][a] = _mm_add_epi8(acc[k][a], _mm_shuffle_epi8(weight[a], v[k]));
          if constexpr (odd) plain[k] = _mm_sub_epi8(plain[k], _mm_cmpgt_epi8(v[k], floor));
        }
      }
#pragma GCC unroll 4
      for (int k = 0; k < K; ++k)
#pragma GCC unroll 8
        for (int g = 0; g < 2 * A; ++g) {
          const __m128i nibble = g % 2 ? _mm_srli_epi16(acc[k][g / 2], 4) : acc[k][g / 2];
          __m128i* into = reinterpret_cast<__m128i*>(counted[k][g]);
          _mm_store_si128(into, _mm_add_epi8(_mm_load_si128(into), _mm_and_si128(nibble, low)));
        }
    }
    if constexpr (odd)
#pragma GCC unroll 4
      for (int k = 0; k < K; ++k) _mm_store_si128(reinterpret_cast<__m128i*>(counted[k][G - 1]), plain[k]);
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k)
#pragma GCC unroll 8
      for (int g = 0; g < G; ++g) add_counts(lanes[k].ge + g * kSimdLanes, counted[k][g], 16);
  }
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k) _mm_store_si128(reinterpret_cast<__m128i*>(lanes[k].state), v[k]);
}

template <int K, int Groups>
void simd_run_ssse3_counted(const SimdPlan& p, SimdLane* lanes, int groups, size_t begin, size_t end) {
  simd_with_groups<4, Groups>(groups, [&](auto g) {
    if constexpr (decltype(g)::value >= 2)
      simd_run_ssse3_nibbles<K, decltype(g)::value>(p, lanes, begin, end);
  });
}

// `count` chunks (up to 4) of a plan of up to 16 states on the SSSE3 path with 2 to 4
// groups, in pairs; `Groups` as in fsm/simd/plan.hpp SimdKernels.
template <int Groups>
void simd_summarize_ssse3_counted(const SimdPlan& p, SimdLane* lanes, int count, int groups) {
  simd_in_lockstep(lanes, count, 2, [&](auto k, SimdLane* some, size_t begin, size_t end) {
    if constexpr (decltype(k)::value <= 2)  // 16 registers hold two chunks' counters
      simd_run_ssse3_counted<decltype(k)::value, Groups>(p, some, groups, begin, end);
  });
}

}  // namespace v1
}  // namespace parafuse::fsm

#endif  // __x86_64__
