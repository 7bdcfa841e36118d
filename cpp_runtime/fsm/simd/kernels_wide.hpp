// parafuse boostfsm runtime: the AVX-512 VBMI kernels of SIMD enumeration (fsm/simd/kernels.hpp)
// for machines of 65 to 256 states. Lanes fill R registers of 64 (one byte per lane, the
// plan state); a byte's row of `next` is B blocks of 64 bytes (fsm/simd/plan.hpp, rows of
// 128 or 256 bytes). vpermi2b looks a register of lane states up in a 128-entry table held
// in two registers (it reads bits 0-6 of each index):
//
//   65-128 states   B = 2, R = 2: one vpermi2b per register of lanes
//   129-256 states  B = 4, R = 3 or 4: two vpermi2b (blocks 0-1 and 2-3) and a blend on
//                   bit 7 of each lane's state (vpmovb2m gives it as a mask)
//
// Counting is as in the 64-lane vpermb kernel, with an unsigned compare (states reach 255):
// per group and register, the lanes at or above the group's first state add 1 to their
// 8-bit counter, widened every kSimdFlush bytes.
#pragma once

#include <algorithm>
#include <cstdint>

#include "fsm/simd/plan.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

namespace parafuse::fsm {
inline namespace v1 {

template <int K, int G, int R, int B>
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void simd_run_wide(const SimdPlan& p,
                                                                          SimdLane* lanes,
                                                                          size_t begin, size_t end) {
  static_assert(B == 2 || B == 4, "rows of 128 or 256 bytes");
  constexpr size_t kRow = 64 * B;
  __m512i v[K][R], acc[K][R][G ? G : 1], floor[G ? G : 1];
  const __m512i one = _mm512_set1_epi8(1);
  const uint8_t* data[K];
  for (int k = 0; k < K; ++k) data[k] = lanes[k].data;
  const uint8_t* const next = p.next;
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) v[k][r] = _mm512_load_si512(lanes[k].state + 64 * r);
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) floor[g] = _mm512_set1_epi8(char(p.lo[g]));
  for (size_t b = begin; b < end; b += kSimdFlush) {
    const size_t e = std::min(end, b + kSimdFlush);
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int g = 0; g < G; ++g) acc[k][r][g] = _mm512_setzero_si512();
    for (size_t i = b; i < e; ++i) {
#pragma GCC unroll 4
      for (int k = 0; k < K; ++k) {
        const uint8_t* row = next + size_t(data[k][i]) * kRow;
        const __m512i t0 = _mm512_load_si512(row), t1 = _mm512_load_si512(row + 64);
        __m512i t2 = t0, t3 = t1;
        if constexpr (B == 4) t2 = _mm512_load_si512(row + 128), t3 = _mm512_load_si512(row + 192);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
          const __m512i x = v[k][r];
          __m512i y = _mm512_permutex2var_epi8(t0, x, t1);  // entries 0-127 by bits 0-6
          if constexpr (B == 4)  // entries 128-255 where bit 7 is set
            y = _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), y, _mm512_permutex2var_epi8(t2, x, t3));
          v[k][r] = y;
#pragma GCC unroll 4
          for (int g = 0; g < G; ++g)
            acc[k][r][g] = _mm512_mask_add_epi8(acc[k][r][g], _mm512_cmpge_epu8_mask(y, floor[g]),
                                                acc[k][r][g], one);
        }
      }
    }
    alignas(64) uint8_t counted[64];
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int g = 0; g < G; ++g) {
          _mm512_store_si512(counted, acc[k][r][g]);
          add_counts(lanes[k].ge + g * kSimdLanes + 64 * r, counted, 64);
        }
  }
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) _mm512_store_si512(lanes[k].state + 64 * r, v[k][r]);
}

// K chunks in lockstep, lanes and table blocks for the plan's states (65 to 256). One
// vpermi2b's latency (several cycles) bounds a lane register's steps, so chunks run in
// lockstep as far as the registers hold their lanes and counters (32 on AVX-512).
template <int K, int G>
void simd_run_wide_states(const SimdPlan& p, SimdLane* lanes, size_t begin, size_t end) {
  if (p.states <= 128) {
    simd_run_wide<K, G, 2, 2>(p, lanes, begin, end);
  } else if constexpr (K <= 2) {
    if (p.states <= 192) simd_run_wide<K, G, 3, 4>(p, lanes, begin, end);
    else simd_run_wide<K, G, 4, 4>(p, lanes, begin, end);
  }
}

// How many chunks the wide kernels run in lockstep for `states` and `groups`.
inline int simd_wide_lockstep(uint32_t states, int groups) {
  if (states <= 128) return groups <= 1 ? 4 : 2;
  return groups <= 1 ? 2 : 1;
}

template <int K, int Groups>
void simd_run_wide_groups(const SimdPlan& p, SimdLane* lanes, int groups, size_t begin, size_t end) {
  simd_with_groups<4, Groups>(groups, [&](auto g) {
    if constexpr (K <= 2 || decltype(g)::value <= 1)  // simd_wide_lockstep
      simd_run_wide_states<K, decltype(g)::value>(p, lanes, begin, end);
  });
}

// `count` chunks (up to 4) of a plan of 65 to 256 states on the AVX-512 VBMI path,
// `groups` counted (0-4): in lockstep over their common length, then each alone.
// `Groups`: the group count it is compiled for (-1: any; fsm/simd/plan.hpp SimdKernels).
template <int Groups>
void simd_summarize_wide(const SimdPlan& p, SimdLane* lanes, int count, int groups) {
  simd_in_lockstep(lanes, count, simd_wide_lockstep(p.states, groups),
                   [&](auto k, SimdLane* some, size_t begin, size_t end) {
                     simd_run_wide_groups<decltype(k)::value, Groups>(p, some, groups, begin, end);
                   });
}

}  // namespace v1
}  // namespace parafuse::fsm

#endif  // __x86_64__
