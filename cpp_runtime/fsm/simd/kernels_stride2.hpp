// parafuse boostfsm runtime: SIMD enumeration two bytes per step, for plans of up to 16
// states on the AVX2 path counting at most one group (tables: fsm/simd/byte_pairs.hpp).
// Each chunk has a 256-bit register holding its 16 lane states twice, [lanes | lanes]; a
// step looks the next two input bytes up as one 16-bit word (`row_at`), loads their row
// and shuffles it by the register: the low half gives the states after both bytes, the
// high half the two bytes' visits to the group, added to 8-bit counters. The low half is
// copied to the high one for the next step. Input is read as 64-bit words (4 steps each);
// four chunks run in lockstep, and the bytes past the last whole word run one byte per
// step (fsm/simd/kernels.hpp).
//
// Measured against the per-byte paired kernels on a Zen 3 core (bench/fsm_simd_kernel.py's
// harness, thread CPU time, 4 chunks, pairs of runs alternating): 1.09-1.26x for one group
// (1.0x for one case in one run) and 1.17-1.24x for none (docs/fsm.md). A version counting
// 2 to 5 groups in nibbles ran 0.69-1.0x: those plans keep one byte per step. The
// one-group counter takes a whole byte: split out of nibbles every 14 bytes, as two
// groups need, it ran 0.96x.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "fsm/simd/byte_pairs.hpp"
#include "fsm/simd/plan.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

namespace parafuse::fsm {
inline namespace v1 {

constexpr size_t kStride2Word = 8;            // bytes a round: one 64-bit word, 4 steps
constexpr size_t kStride2Flush = 31 * 8;      // 8-bit counters gain at most 2 a step: 248

inline uint64_t stride2_word(const uint8_t* at) {
  uint64_t word;
  std::memcpy(&word, at, sizeof word);
  return word;
}

// lanes[0 .. K) over bytes [begin, end), a multiple of kStride2Word long; with Counted,
// the plan's one group counted into each lane's `ge`.
template <int K, bool Counted>
__attribute__((target("avx2"))) void simd_run_avx2_stride2(const SimdPlan& p, SimdLane* lanes,
                                                            size_t begin, size_t end) {
  const uint16_t* const row_at = p.byte_pairs->row_at.data();
  const uint8_t* const rows = p.byte_pairs->rows;
  __m256i v[K], acc[K];
  const uint8_t* data[K];
  for (int k = 0; k < K; ++k) {
    data[k] = lanes[k].data;
    v[k] = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(lanes[k].state)));
  }
  for (size_t b = begin; b < end; b += kStride2Flush) {
    const size_t e = std::min(end, b + kStride2Flush);
    for (int k = 0; k < K; ++k) acc[k] = _mm256_setzero_si256();
    for (size_t i = b; i < e; i += kStride2Word) {
#pragma GCC unroll 4
      for (int k = 0; k < K; ++k) {
        uint64_t word = stride2_word(data[k] + i);
#pragma GCC unroll 4
        for (int step = 0; step < 4; ++step) {
          const uint8_t* row = rows + size_t(row_at[uint16_t(word)]) * 8;
          word >>= 16;
          const __m256i x = _mm256_shuffle_epi8(
              _mm256_load_si256(reinterpret_cast<const __m256i*>(row)), v[k]);
          if constexpr (Counted) acc[k] = _mm256_add_epi8(acc[k], x);
          v[k] = _mm256_inserti128_si256(x, _mm256_castsi256_si128(x), 1);
        }
      }
    }
    if constexpr (Counted) {
      alignas(32) uint8_t counted[32];
      for (int k = 0; k < K; ++k) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(counted), acc[k]);
        add_counts(lanes[k].ge, counted + 16, 16);  // the high half: the visits
      }
    }
  }
  for (int k = 0; k < K; ++k)
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes[k].state), _mm256_castsi256_si128(v[k]));
}

// Runs `count` chunks (up to 4) two bytes per step over their common length's whole words,
// counting `groups` (0 or 1); returns where the words ended.
inline size_t simd_stride2_lockstep(const SimdPlan& p, SimdLane* lanes, int count, int groups,
                                    size_t common) {
  const size_t end = common / kStride2Word * kStride2Word;
  const auto run = [&](auto counted) {
    constexpr bool C = decltype(counted)::value;
    int k = 0;
    for (; k + 4 <= count; k += 4) simd_run_avx2_stride2<4, C>(p, lanes + k, 0, end);
    for (; k + 2 <= count; k += 2) simd_run_avx2_stride2<2, C>(p, lanes + k, 0, end);
    for (; k < count; ++k) simd_run_avx2_stride2<1, C>(p, lanes + k, 0, end);
  };
  if (end == 0) return 0;
  if (groups > 0) run(std::true_type());
  else run(std::false_type());
  return end;
}

}  // namespace v1
}  // namespace parafuse::fsm

#endif  // __x86_64__
