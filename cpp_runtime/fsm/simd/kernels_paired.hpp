// parafuse boostfsm runtime: the paired kernels of SIMD enumeration (fsm/simd/kernels.hpp)
// for machines of up to 16 states: two chunks share a 256-bit register (the first chunk's
// 16 lanes in the low half, the second's in the high half; vpshufb looks each half up in
// its own 128 bits), so one shuffle advances two chunks and the counting work per byte is
// shared by both. The same code is compiled twice (fsm/simd/kernels_paired_body.inc): for
// AVX2 (path avx2) and for AVX-512 BW/VL (path avx512vl), where 32 vector registers let
// the byte loop unroll for every group count.
//
// Counting a group the plain way costs a compare and a subtract per byte (lanes at or
// above the group's first state: fsm/simd/plan.hpp); the `pairs` kernels do so for 0 or 1
// group. For 2 to 8 groups, the `pairs_nibbles` kernels have two groups share one
// 8-bit counter per lane, one in each nibble: a shuffle of a per-state weight table by
// the lane states gives each lane's increments (0x01: at or above group 2a's first state,
// 0x10: at or above group 2a + 1's), and one add counts both, so a group costs one vector
// operation per byte instead of two. An odd last group is counted the plain way. The
// nibbles are split into 8-bit counters (kept in memory: touched once per kNibbleSteps
// bytes) before they can overflow, and those are widened into the 64-bit counts every
// kSimdFlush bytes, as the other kernels do.
//
// Measured on a Zen 4 core (docs/fsm.md, bench/fsm_simd_paths.py): the AVX-512VL build runs
// 5 groups of 14 states 3-15% faster (its loop unrolled where AVX2's stays rolled); with
// fewer groups the two builds are within the shared machine's noise. Tried and not kept: a compare into a mask register and a masked add per group (no shuffle, but 2
// instructions: 20-40% slower than the nibbles), and four chunks per 512-bit register
// (half the instructions; Zen 4 runs each as two halves: no faster).
// (Counted the plain way, a compare and a subtract per group, 5 groups of 14 states run
// 1.5 GB/s.)
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "fsm/simd/plan.hpp"

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

// Pair k's rows of `next` for its chunks' byte i (data[2k], data[2k + 1]: their bytes).
inline __attribute__((target("avx2"), always_inline)) __m256i pair_rows_at(
    const uint8_t* next, const uint8_t* const* data, int k, size_t i) {
  return pair_load(next + size_t(data[2 * k][i]) * kSimdRowBytes,
                   next + size_t(data[2 * k + 1][i]) * kSimdRowBytes);
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

// The weights of nibble counter a: per plan state, 0x01 if at or above group 2a's first
// state, 0x10 if at or above group 2a + 1's (when there is one); both 128-bit halves alike.
inline __attribute__((target("avx2"))) __m256i nibble_weights(const SimdPlan& p, int a, int groups) {
  alignas(16) uint8_t weight[16] = {};
  for (uint32_t s = 0; s < 16 && s < p.states; ++s)
    weight[s] = uint8_t((s >= p.lo[2 * a] ? 0x01 : 0) |
                        (2 * a + 1 < groups && s >= p.lo[2 * a + 1] ? 0x10 : 0));
  return _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(weight)));
}

}  // namespace v1
}  // namespace parafuse::fsm

// simd_run_avx2_pairs and simd_run_avx2_pairs_nibbles: AVX2, 16 vector registers.
#define PF_PAIRED_TARGET "avx2"
#define PF_PAIRED(name) simd_run_avx2_##name
#define PF_PAIRED_UNROLLED_COUNTERS 1
#include "fsm/simd/kernels_paired_body.inc"

// simd_run_avx512vl_pairs and simd_run_avx512vl_pairs_nibbles: the same 256-bit code under
// AVX-512 BW/VL, whose 32 vector registers hold every group count's counters unrolled.
#define PF_PAIRED_TARGET "avx2,avx512f,avx512bw,avx512vl"
#define PF_PAIRED(name) simd_run_avx512vl_##name
#define PF_PAIRED_UNROLLED_COUNTERS 4
#include "fsm/simd/kernels_paired_body.inc"

#endif  // __x86_64__
