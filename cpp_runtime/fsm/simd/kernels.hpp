// parafuse boostfsm runtime: the vector kernels of SIMD enumeration (fsm/simd/plan.hpp).
// Each advances K chunks in lockstep (independent shuffles overlap their latency), one
// shuffle of all lanes per byte and chunk, and keeps per-lane 8-bit counts of the lanes
// at or above each group's first state, widened every 255 bytes.
//
//   ssse3       pshufb, 16 lanes (machines of up to 16 states), 2 to 4 groups counted two
//               per 8-bit counter (fsm/simd/kernels_ssse3_nibbles.hpp)
//   avx2        vpshufb on 32 lanes: two chunks per register for up to 16 states
//               (fsm/simd/kernels_paired.hpp);
//               composed from 16-entry blocks for up to 64 states: the block of a
//               lane's state is picked with blends on its bits 4 and 5
//   avx512vl    the paired kernels of up to 16 states compiled for AVX-512 BW/VL: the same
//               256-bit code with 32 registers, unrolled for every group count
//   avx512vbmi  vpermb, 64 lanes (up to 64 states), 2 to 4 groups counted two per 8-bit
//               counter (fsm/simd/kernels_vbmi_nibbles.hpp); vpermi2b on 2 to 4
//               registers of 64 lanes for 65-256 states (fsm/simd/kernels_wide.hpp)
//
// Every kernel carries its instruction set as a target attribute, so the build needs no
// -march flag; fsm/simd/cpu_features.hpp says which of them this CPU runs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fsm/simd/kernels_paired.hpp"
#include "fsm/simd/kernels_ssse3_nibbles.hpp"
#include "fsm/simd/kernels_stride2.hpp"
#include "fsm/simd/kernels_vbmi_nibbles.hpp"
#include "fsm/simd/kernels_wide.hpp"
#include "fsm/simd/plan.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#define PF_SIMD_X86 1
#endif

namespace parafuse::fsm {
inline namespace v1 {

#ifdef PF_SIMD_X86

template <int K, int G>
__attribute__((target("ssse3"))) void simd_run_ssse3(const SimdPlan& p, SimdLane* lanes,
                                                     size_t begin, size_t end) {
  __m128i v[K], acc[K][G ? G : 1], floor[G ? G : 1];
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k) v[k] = _mm_load_si128(reinterpret_cast<const __m128i*>(lanes[k].state));
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) floor[g] = _mm_set1_epi8(char(int(p.lo[g]) - 1));
  for (size_t b = begin; b < end; b += kSimdFlush) {
    const size_t e = std::min(end, b + kSimdFlush);
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
      for (int g = 0; g < G; ++g) acc[k][g] = _mm_setzero_si128();
    for (size_t i = b; i < e; ++i) {
#pragma GCC unroll 4
      for (int k = 0; k < K; ++k) {
        const __m128i row = _mm_load_si128(
            reinterpret_cast<const __m128i*>(p.next + size_t(lanes[k].data[i]) * kSimdRowBytes));
        v[k] = _mm_shuffle_epi8(row, v[k]);
#pragma GCC unroll 4
        for (int g = 0; g < G; ++g) acc[k][g] = _mm_sub_epi8(acc[k][g], _mm_cmpgt_epi8(v[k], floor[g]));
      }
    }
    alignas(16) uint8_t counted[16];
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
      for (int g = 0; g < G; ++g) {
        _mm_store_si128(reinterpret_cast<__m128i*>(counted), acc[k][g]);
        add_counts(lanes[k].ge + g * kSimdLanes, counted, 16);
      }
  }
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k) _mm_store_si128(reinterpret_cast<__m128i*>(lanes[k].state), v[k]);
}

// B blocks of 16 table entries (1, 2 or 4), R registers of 32 lanes (1 or 2).
template <int K, int G, int B, int R>
__attribute__((target("avx2"))) void simd_run_avx2(const SimdPlan& p, SimdLane* lanes,
                                                   size_t begin, size_t end) {
  __m256i v[K][R], acc[K][R][G ? G : 1], floor[G ? G : 1];
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
      v[k][r] = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes[k].state + 32 * r));
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) floor[g] = _mm256_set1_epi8(char(int(p.lo[g]) - 1));
  for (size_t b = begin; b < end; b += kSimdFlush) {
    const size_t e = std::min(end, b + kSimdFlush);
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int g = 0; g < G; ++g) acc[k][r][g] = _mm256_setzero_si256();
    for (size_t i = b; i < e; ++i) {
#pragma GCC unroll 4
      for (int k = 0; k < K; ++k) {
        const uint8_t* row = p.next + size_t(lanes[k].data[i]) * kSimdRowBytes;
        __m256i block[B];
#pragma GCC unroll 4
        for (int j = 0; j < B; ++j)
          block[j] = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(row + 16 * j)));
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
          const __m256i x = v[k][r];
          __m256i y = _mm256_shuffle_epi8(block[0], x);  // lanes < 16 index it by their low nibble
          if constexpr (B >= 2) {
            const __m256i bit4 = _mm256_slli_epi16(x, 3);  // bit 4 of each byte to bit 7
            y = _mm256_blendv_epi8(y, _mm256_shuffle_epi8(block[1], x), bit4);
            if constexpr (B == 4) {
              const __m256i high = _mm256_blendv_epi8(_mm256_shuffle_epi8(block[2], x),
                                                      _mm256_shuffle_epi8(block[3], x), bit4);
              y = _mm256_blendv_epi8(y, high, _mm256_slli_epi16(x, 2));  // bit 5
            }
          }
          v[k][r] = y;
#pragma GCC unroll 4
          for (int g = 0; g < G; ++g)
            acc[k][r][g] = _mm256_sub_epi8(acc[k][r][g], _mm256_cmpgt_epi8(y, floor[g]));
        }
      }
    }
    alignas(32) uint8_t counted[32];
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int g = 0; g < G; ++g) {
          _mm256_store_si256(reinterpret_cast<__m256i*>(counted), acc[k][r][g]);
          add_counts(lanes[k].ge + g * kSimdLanes + 32 * r, counted, 32);
        }
  }
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
      _mm256_store_si256(reinterpret_cast<__m256i*>(lanes[k].state + 32 * r), v[k][r]);
}

template <int K, int G>
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void simd_run_vbmi(
    const SimdPlan& p, SimdLane* lanes, size_t begin, size_t end) {
  __m512i v[K], acc[K][G ? G : 1], floor[G ? G : 1];
  const __m512i one = _mm512_set1_epi8(1);
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k) v[k] = _mm512_load_si512(lanes[k].state);
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) floor[g] = _mm512_set1_epi8(char(int(p.lo[g]) - 1));
  for (size_t b = begin; b < end; b += kSimdFlush) {
    const size_t e = std::min(end, b + kSimdFlush);
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
      for (int g = 0; g < G; ++g) acc[k][g] = _mm512_setzero_si512();
    for (size_t i = b; i < e; ++i) {
#pragma GCC unroll 4
      for (int k = 0; k < K; ++k) {
        const __m512i row = _mm512_load_si512(p.next + size_t(lanes[k].data[i]) * kSimdRowBytes);
        v[k] = _mm512_permutexvar_epi8(v[k], row);
#pragma GCC unroll 4
        for (int g = 0; g < G; ++g)
          acc[k][g] = _mm512_mask_add_epi8(acc[k][g], _mm512_cmpgt_epi8_mask(v[k], floor[g]),
                                           acc[k][g], one);
      }
    }
    alignas(64) uint8_t counted[64];
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
      for (int g = 0; g < G; ++g) {
        _mm512_store_si512(counted, acc[k][g]);
        add_counts(lanes[k].ge + g * kSimdLanes, counted, p.states);
      }
  }
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k) _mm512_store_si512(lanes[k].state, v[k]);
}

#endif  // PF_SIMD_X86

// Run lanes[0..K) over bytes [begin, end) of each with `G` counted groups: the kernel of
// the plan's path where the unit compiles it for the plan's states (class `Most`:
// fsm/simd/plan.hpp SimdKernels), else (never for a plan its kernels fit) the scalar lanes.
template <int K, int G, int Most>
void simd_run_fixed(const SimdPlan& p, SimdLane* lanes, size_t begin, size_t end) {
  switch (p.path) {
#ifdef PF_SIMD_X86
    case SimdPath::ssse3:
      if constexpr (simd_fit_states(Most, 1, 16)) return simd_run_ssse3<K, G>(p, lanes, begin, end);
      break;
    case SimdPath::avx512vl:  // up to 16 states: one chunk alone, as on AVX2
    case SimdPath::avx2:
      if (p.states <= 16) {
        if constexpr (simd_fit_states(Most, 1, 16)) return simd_run_avx2<K, G, 1, 1>(p, lanes, begin, end);
      } else if (p.states <= 32) {
        if constexpr (simd_fit_states(Most, 17, 32)) return simd_run_avx2<K, G, 2, 1>(p, lanes, begin, end);
      } else {
        if constexpr (simd_fit_states(Most, 33, 64)) return simd_run_avx2<K, G, 4, 2>(p, lanes, begin, end);
      }
      break;
    case SimdPath::avx512vbmi:
      if constexpr (simd_fit_states(Most, 1, 64)) return simd_run_vbmi<K, G>(p, lanes, begin, end);
      break;
#endif
    default: break;
  }
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k) simd_run_scalar<G>(p, lanes[k], begin, end);
}

template <int K, int Most, int Groups>
void simd_run_lockstep(const SimdPlan& p, SimdLane* lanes, int groups, size_t begin, size_t end) {
  simd_with_groups<4, Groups>(groups, [&](auto g) {
    simd_run_fixed<K, decltype(g)::value, Most>(p, lanes, begin, end);
  });
}

// K pairs of chunks (2K lanes) of a machine of up to 16 states on the AVX2 or AVX-512VL
// path: 2 to 8 groups counted two per 8-bit counter (fsm/simd/kernels_paired.hpp), two
// pairs in lockstep while their counters fit the registers unrolled (AVX2: up to 3 groups;
// AVX-512VL: all 8). From 4 groups AVX2 steps one pair at a time, unrolled: on a Zen 3 core
// 4-8 groups ran 1.1-1.25x (medians of 9 alternating pairs) the two pairs in a rolled loop.
template <int K, int Most, int Groups>
void simd_run_pairs(const SimdPlan& p, SimdLane* lanes, int groups, size_t begin, size_t end) {
#ifdef PF_SIMD_X86
  if constexpr (simd_fit_states(Most, 1, 16)) {  // past 16 states no plan pairs chunks
    const auto with_groups = [groups](auto&& run) {
      simd_with_groups<int(kSimdPairedMaxGroups), Groups>(groups, run);
    };
    if (p.path == SimdPath::avx512vl) {
      with_groups([&](auto g) {
        if constexpr (g() <= 1) simd_run_avx512vl_pairs<K, g()>(p, lanes, begin, end);
        else simd_run_avx512vl_pairs_nibbles<K, g()>(p, lanes, begin, end);
      });
    } else {
      with_groups([&](auto g) {
        if constexpr (g() <= 1) {
          simd_run_avx2_pairs<K, g()>(p, lanes, begin, end);
        } else if constexpr (g() <= 3) {
          simd_run_avx2_pairs_nibbles<K, g()>(p, lanes, begin, end);
        } else {
          for (int k = 0; k < K; ++k)
            simd_run_avx2_pairs_nibbles<1, g()>(p, lanes + 2 * k, begin, end);
        }
      });
    }
  }
#else
  simd_run_lockstep<2 * K, Most, Groups>(p, lanes, groups, begin, end);
#endif
}

// One chunk alone; past kSimdMaxGroups groups (the paired kernel only), beside a copy of
// itself whose counts go to scratch.
template <int Most, int Groups>
void simd_run_alone(const SimdPlan& p, SimdLane& lane, int groups, size_t begin, size_t end) {
  if (groups <= int(kSimdMaxGroups)) {
    simd_run_lockstep<1, Most, Groups>(p, &lane, groups, begin, end);
    return;
  }
  std::vector<uint64_t> scratch(size_t(groups) * kSimdLanes, 0);
  SimdLane pair[2] = {lane, lane};
  pair[1].ge = scratch.data();
  simd_run_pairs<1, Most, Groups>(p, pair, groups, begin, end);
  std::copy(pair[0].state, pair[0].state + kSimdLanes, lane.state);
}

// Summarise `count` chunks (up to 4): in lockstep over their common length, then each
// alone. `groups` is the plan's group count, or 0 to follow the states only. Compiled for
// the plans of one class of state counts and one group count (`Most`, `Groups`:
// fsm/simd/plan.hpp SimdKernels) in a unit of its own, in parallel with the rest of the
// library: src/M_simd.cpp, and src/M_simd_vbmi.cpp for the AVX-512 VBMI kernels of 17 to
// 256 states (simd_summarize_wide, simd_summarize_vbmi_counted), which M_simd.cpp declares
// extern.
template <int Most, int Groups>
void simd_summarize_fit(const SimdPlan& p, SimdLane* lanes, int count, int groups) {
  if (!simd_fit_states(Most, int(p.states), int(p.states)) || !simd_fit_groups(Groups, groups))
    throw std::logic_error("SIMD kernels for " + std::to_string(simd_class_most(Most)) +
                           " states and " + std::to_string(Groups) + " groups ran a plan of " +
                           std::to_string(p.states) + " states counting " +
                           std::to_string(groups));  // make_simd_plan checks first
#ifdef PF_SIMD_X86
  if constexpr (simd_fit_states(Most, kSimdNarrowStates + 1, kSimdLanes)) {
    if (p.path == SimdPath::avx512vbmi && p.wide()) {  // 65-256 states
      simd_summarize_wide<Groups>(p, lanes, count, groups);
      return;
    }
  }
  if constexpr (simd_fit_states(Most, 17, kSimdNarrowStates) && Groups != 0 && Groups != 1) {
    if (p.path == SimdPath::avx512vbmi && groups >= 2) {  // 17-64 states, 2-4 groups
      simd_summarize_vbmi_counted<Groups>(p, lanes, count, groups);
      return;
    }
  }
  if constexpr (simd_fit_states(Most, 1, 16) && Groups != 0 && Groups != 1) {
    if (p.path == SimdPath::ssse3 && groups >= 2) {  // up to 16 states, 2-4 groups
      simd_summarize_ssse3_counted<Groups>(p, lanes, count, groups);
      return;
    }
  }
#endif
  size_t common = lanes[0].length;
  for (int k = 1; k < count; ++k) common = std::min(common, lanes[k].length);
  size_t begin = 0;  // up to 16 states on AVX2: two bytes per step first, where the plan can
#ifdef PF_SIMD_X86
  if constexpr (simd_fit_states(Most, 1, 16))
    if (p.byte_pairs) begin = simd_stride2_lockstep(p, lanes, count, groups, common);
#endif
  // Up to 16 states on AVX2 or AVX-512VL: two chunks per register, two pairs in lockstep.
  const bool paired = p.paired();
  if (paired && count == 4) simd_run_pairs<2, Most, Groups>(p, lanes, groups, begin, common);
  else if (paired && count >= 2) simd_run_pairs<1, Most, Groups>(p, lanes, groups, begin, common);
  // Four chunks in lockstep while their registers fit (16 on AVX2), else pairs.
  const bool four = !paired && count == 4 &&
                    (groups <= 1 || (groups == 2 && p.path == SimdPath::avx512vbmi));
  if (four) simd_run_lockstep<4, Most, Groups>(p, lanes, groups, begin, common);
  for (int k = paired ? count / 2 * 2 : four ? 4 : 0; k + 1 < count; k += 2)
    simd_run_lockstep<2, Most, Groups>(p, lanes + k, groups, begin, common);
  if (count % 2) simd_run_alone<Most, Groups>(p, lanes[count - 1], groups, begin, common);
  for (int k = 0; k < count; ++k)
    if (lanes[k].length > common)
      simd_run_alone<Most, Groups>(p, lanes[k], groups, common, lanes[k].length);
}

// The kernels of one class and group count, for Tables::simd_kernels. Where a unit
// compiles simd_summarize_fit<Most, Groups> elsewhere, it declares it extern first
// (src/M.cpp, from the template; PARAFUSE_FSM_SIMD_ELSEWHERE: the kernels of every plan,
// <0, -1>, for the engine-set driver).
template <int Most, int Groups>
const SimdKernels* simd_kernels_of() {
  static const SimdKernels kernels{&simd_summarize_fit<Most, Groups>, Most, Groups};
  return &kernels;
}

// Summarise `count` chunks with the kernels of the plan's tables.
inline void simd_summarize(const SimdPlan& p, SimdLane* lanes, int count, int groups) {
  p.kernels->summarize(p, lanes, count, groups);
}

#ifdef PARAFUSE_FSM_SIMD_ELSEWHERE
extern template void simd_summarize_fit<0, -1>(const SimdPlan&, SimdLane*, int, int);
#endif

}  // namespace v1
}  // namespace parafuse::fsm
