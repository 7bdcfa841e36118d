// parafuse boostfsm runtime: the paired AVX2 kernels of SIMD enumeration (fsm/simd_kernels.hpp)
// for machines of up to 16 states: two chunks share a register (the first chunk's 16
// lanes in the low half, the second's in the high half; vpshufb looks each half up in its
// own 128 bits), so one shuffle advances two chunks and the counting work per byte is
// shared by both.
//
// Counting a group the plain way costs a compare and a subtract per byte (lanes at or
// above the group's first state: fsm/simd_plan.hpp); simd_run_avx2_pairs does so for 0
// or 1 group. For 2 to 8 groups, simd_run_avx2_pairs_nibbles has two groups share one
// 8-bit counter per lane, one in each nibble: a shuffle of a per-state weight table by
// the lane states gives each lane's increments (0x01: at or above group 2a's first state,
// 0x10: at or above group 2a + 1's), and one add counts both, so a group costs one vector
// operation per byte instead of two. Shuffles run on fewer ports than adds and compares
// (two of four vector pipes on Zen 4, one or two on Intel cores), and each byte already
// takes two (the rows' insert and the step), so an odd last group is counted the plain
// way, which keeps the shuffle and the other pipes about equally busy. The nibbles are
// split into 8-bit counters (kept in memory: touched once per kNibbleSteps bytes) before
// they can overflow, and those are widened into the 64-bit counts every kSimdFlush bytes,
// as the other kernels do. (Before: compare and subtract per group, one pair of chunks at
// a time past 4 groups for want of registers; 5 groups of 14 states ran 1.5 GB/s per
// core, now about 2.)
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "fsm/simd_plan.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

namespace parafuse::fsm {
inline namespace v1 {

constexpr size_t kNibbleSteps = 15;  // a nibble counts at most this many bytes
static_assert(kSimdFlush % kNibbleSteps == 0, "8-bit counters take whole nibble rounds");

// Two 16-byte halves as one register.
inline __attribute__((target("avx2"), always_inline)) __m256i pair_load(const uint8_t* low,
                                                                         const uint8_t* high) {
  return _mm256_inserti128_si256(
      _mm256_castsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(low))),
      _mm_load_si128(reinterpret_cast<const __m128i*>(high)), 1);
}

// Pair k's rows of `next` for its chunks' byte i.
inline __attribute__((target("avx2"), always_inline)) __m256i pair_rows(const SimdPlan& p,
                                                                         const SimdLane* lanes,
                                                                         int k, size_t i) {
  return pair_load(p.next + size_t(lanes[2 * k].data[i]) * kSimdRowBytes,
                   p.next + size_t(lanes[2 * k + 1].data[i]) * kSimdRowBytes);
}

// Pair k's lane states back into its two chunks.
inline __attribute__((target("avx2"))) void pair_store(__m256i v, SimdLane* lanes, int k) {
  alignas(32) uint8_t state[32];
  _mm256_store_si256(reinterpret_cast<__m256i*>(state), v);
  std::copy(state, state + 16, lanes[2 * k].state);
  std::copy(state + 16, state + 32, lanes[2 * k + 1].state);
}

// Pair k's 8-bit counts of group g into its two chunks' 64-bit counts.
inline void pair_add_counts(const uint8_t* counted, SimdLane* lanes, int k, int g) {
  add_counts(lanes[2 * k].ge + g * kSimdLanes, counted, 16);
  add_counts(lanes[2 * k + 1].ge + g * kSimdLanes, counted + 16, 16);
}

// lanes[2k], lanes[2k + 1] form pair k; K pairs in lockstep; G = 0 or 1 counted group.
template <int K, int G>
__attribute__((target("avx2"))) void simd_run_avx2_pairs(const SimdPlan& p, SimdLane* lanes,
                                                         size_t begin, size_t end) {
  __m256i v[K], acc[K][G ? G : 1], floor[G ? G : 1];
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k) v[k] = pair_load(lanes[2 * k].state, lanes[2 * k + 1].state);
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) floor[g] = _mm256_set1_epi8(char(int(p.lo[g]) - 1));
  for (size_t b = begin; b < end; b += kSimdFlush) {
    const size_t e = std::min(end, b + kSimdFlush);
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
      for (int g = 0; g < G; ++g) acc[k][g] = _mm256_setzero_si256();
    for (size_t i = b; i < e; ++i) {
#pragma GCC unroll 4
      for (int k = 0; k < K; ++k) {
        v[k] = _mm256_shuffle_epi8(pair_rows(p, lanes, k, i), v[k]);
#pragma GCC unroll 4
        for (int g = 0; g < G; ++g) acc[k][g] = _mm256_sub_epi8(acc[k][g], _mm256_cmpgt_epi8(v[k], floor[g]));
      }
    }
    alignas(32) uint8_t counted[32];
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
      for (int g = 0; g < G; ++g) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(counted), acc[k][g]);
        pair_add_counts(counted, lanes, k, g);
      }
  }
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k) pair_store(v[k], lanes, k);
}

// The weights of nibble counter a: per plan state, 0x01 if at or above group 2a's first
// state, 0x10 if at or above group 2a + 1's (when there is one); both 128-bit halves alike.
inline __attribute__((target("avx2"))) __m256i nibble_weights(const SimdPlan& p, int a, int groups) {
  alignas(16) uint8_t weight[16] = {};
  for (uint32_t s = 0; s < 16 && s < p.states; ++s)
    weight[s] = uint8_t((s >= p.lo[2 * a] ? 0x01 : 0) |
                        (2 * a + 1 < groups && s >= p.lo[2 * a + 1] ? 0x10 : 0));
  return _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(weight)));
}

// lanes[2k], lanes[2k + 1] form pair k; K pairs in lockstep; G groups, 2 <= G <= 8.
template <int K, int G>
__attribute__((target("avx2"))) void simd_run_avx2_pairs_nibbles(const SimdPlan& p, SimdLane* lanes,
                                                                 size_t begin, size_t end) {
  constexpr int A = G / 2;       // nibble counters per pair: groups 0 .. 2A - 1
  constexpr bool odd = G % 2;    // group G - 1 by compare and subtract
  __m256i v[K], acc[K][A], weight[A], plain[K];
  const __m256i low = _mm256_set1_epi8(0x0F);
  const __m256i floor = _mm256_set1_epi8(char(int(p.lo[G - 1]) - 1));
  alignas(32) uint8_t counted[K][G][32];  // 8-bit counts since the last widening
  const uint8_t* data[2 * K];
  for (int c = 0; c < 2 * K; ++c) data[c] = lanes[c].data;
  const uint8_t* const next = p.next;
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k) v[k] = pair_load(lanes[2 * k].state, lanes[2 * k + 1].state);
#pragma GCC unroll 4
  for (int a = 0; a < A; ++a) weight[a] = nibble_weights(p, a, G);
  for (size_t b = begin; b < end; b += kSimdFlush) {
    const size_t e = std::min(end, b + kSimdFlush);
    std::memset(counted, 0, sizeof counted);
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k) plain[k] = _mm256_setzero_si256();
    for (size_t n = b; n < e; n += kNibbleSteps) {
      const size_t m = std::min(e, n + kNibbleSteps);
#pragma GCC unroll 4
      for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
        for (int a = 0; a < A; ++a) acc[k][a] = _mm256_setzero_si256();
#define PF_NIBBLE_STEP                                                                         \
  for (int k = 0; k < K; ++k) {                                                                \
    v[k] = _mm256_shuffle_epi8(pair_load(next + size_t(data[2 * k][i]) * kSimdRowBytes,         \
                                         next + size_t(data[2 * k + 1][i]) * kSimdRowBytes),    \
                               v[k]);                                                          \
    for (int a = 0; a < A; ++a)                                                                \
      acc[k][a] = _mm256_add_epi8(acc[k][a], _mm256_shuffle_epi8(weight[a], v[k]));            \
    if constexpr (odd) plain[k] = _mm256_sub_epi8(plain[k], _mm256_cmpgt_epi8(v[k], floor));   \
  }
      // Unrolled where the counters leave registers to spare (up to 3 groups): about 30%
      // fewer instructions per byte; with more groups unrolling spills them.
      if constexpr (A <= 1) {
#pragma GCC unroll 5
        for (size_t i = n; i < m; ++i) { PF_NIBBLE_STEP }
      } else {
        for (size_t i = n; i < m; ++i) { PF_NIBBLE_STEP }
      }
#undef PF_NIBBLE_STEP
#pragma GCC unroll 4
      for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
        for (int g = 0; g < 2 * A; ++g) {
          const __m256i nibble = g % 2 ? _mm256_srli_epi16(acc[k][g / 2], 4) : acc[k][g / 2];
          __m256i* into = reinterpret_cast<__m256i*>(counted[k][g]);
          _mm256_store_si256(into, _mm256_add_epi8(_mm256_load_si256(into),
                                                   _mm256_and_si256(nibble, low)));
        }
    }
    if constexpr (odd)
#pragma GCC unroll 4
      for (int k = 0; k < K; ++k)
        _mm256_store_si256(reinterpret_cast<__m256i*>(counted[k][G - 1]), plain[k]);
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
      for (int g = 0; g < G; ++g) pair_add_counts(counted[k][g], lanes, k, g);
  }
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k) pair_store(v[k], lanes, k);
}

}  // namespace v1
}  // namespace parafuse::fsm

#endif  // __x86_64__
