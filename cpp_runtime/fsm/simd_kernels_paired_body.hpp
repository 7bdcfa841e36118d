// parafuse boostfsm runtime: the bodies of the paired kernels of SIMD enumeration for up to
// 16 states (fsm/simd_kernels_paired.hpp, which includes this file once per instruction
// set). Before including it, define PF_PAIRED_TARGET (the target attribute's string),
// PF_PAIRED(name) (the kernels' names) and PF_PAIRED_UNROLLED_COUNTERS (up to how many
// nibble counters the byte loop is unrolled); this file undefines them.
// No include guard: each inclusion defines another instruction set's kernels.
//
// Both kernels load a pair's rows of byte i + 1 while byte i is stepped and counted (none
// past the range's last byte), so that the loads' latency overlaps a step, and keep the
// counters' splitting and widening as loops (unrolled, they slowed the byte loop that
// runs between them). Before (the rows loaded in the step that shuffles them, the
// widening unrolled), thread CPU time on a Zen 4 core, 4 chunks: 12 states with 3 groups
// ran 2.49 GB/s (AVX2) and 2.63 (AVX-512VL), now 2.90 and 3.02; 14 states with 5 groups
// 2.00 and 2.20, now 2.17 and 2.26; 1 group 3.33, now 3.40 and 3.50.

namespace parafuse::fsm {
inline namespace v1 {

// lanes[2k], lanes[2k + 1] form pair k; K pairs in lockstep; G = 0 or 1 counted group.
template <int K, int G>
__attribute__((target(PF_PAIRED_TARGET))) void PF_PAIRED(pairs)(const SimdPlan& p, SimdLane* lanes,
                                                            size_t begin, size_t end) {
  if (begin == end) return;
  __m256i v[K], acc[K][G ? G : 1], floor[G ? G : 1], rows[K];
  const uint8_t* data[2 * K];
  for (int c = 0; c < 2 * K; ++c) data[c] = lanes[c].data;
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k) {
    v[k] = pair_load(lanes[2 * k].state, lanes[2 * k + 1].state);
    rows[k] = pair_rows_at(p.next, data, k, begin);
  }
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) floor[g] = _mm256_set1_epi8(char(int(p.lo[g]) - 1));
  for (size_t b = begin; b < end; b += kSimdFlush) {
    const size_t e = std::min(end, b + kSimdFlush);
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
      for (int g = 0; g < G; ++g) acc[k][g] = _mm256_setzero_si256();
#pragma GCC unroll 5
    for (size_t i = b; i < e; ++i) {
      const bool load_ahead = i + 1 < end;  // the last byte loads no rows past the end
#pragma GCC unroll 4
      for (int k = 0; k < K; ++k) {
        v[k] = _mm256_shuffle_epi8(rows[k], v[k]);
        if (load_ahead) rows[k] = pair_rows_at(p.next, data, k, i + 1);
#pragma GCC unroll 4
        for (int g = 0; g < G; ++g) acc[k][g] = _mm256_sub_epi8(acc[k][g], _mm256_cmpgt_epi8(v[k], floor[g]));
      }
    }
    alignas(32) uint8_t counted[32];
    for (int k = 0; k < K; ++k)
      for (int g = 0; g < G; ++g) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(counted), acc[k][g]);
        pair_add_counts(counted, lanes, k, g);
      }
  }
  for (int k = 0; k < K; ++k) pair_store(v[k], lanes, k);
}

// lanes[2k], lanes[2k + 1] form pair k; K pairs in lockstep; G groups, 2 <= G <= 8.
template <int K, int G>
__attribute__((target(PF_PAIRED_TARGET))) void PF_PAIRED(pairs_nibbles)(const SimdPlan& p,
                                                                    SimdLane* lanes, size_t begin,
                                                                    size_t end) {
  if (begin == end) return;
  constexpr int A = G / 2;       // nibble counters per pair: groups 0 .. 2A - 1
  constexpr bool odd = G % 2;    // group G - 1 by compare and subtract
  __m256i v[K], acc[K][A], weight[A], plain[K];
  const __m256i low = _mm256_set1_epi8(0x0F);
  const __m256i floor = _mm256_set1_epi8(char(int(p.lo[G - 1]) - 1));
  alignas(32) uint8_t counted[K][G][32];  // 8-bit counts since the last widening
  const uint8_t* data[2 * K];
  for (int c = 0; c < 2 * K; ++c) data[c] = lanes[c].data;
  const uint8_t* const next = p.next;
  __m256i rows[K];  // pair k's rows of its next byte
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k) {
    v[k] = pair_load(lanes[2 * k].state, lanes[2 * k + 1].state);
    rows[k] = pair_rows_at(next, data, k, begin);
  }
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
#define PF_NIBBLE_STEP(load_ahead)                                                             \
  for (int k = 0; k < K; ++k) {                                                                \
    v[k] = _mm256_shuffle_epi8(rows[k], v[k]);                                                 \
    if (load_ahead) rows[k] = pair_rows_at(next, data, k, i + 1);                              \
    for (int a = 0; a < A; ++a)                                                                \
      acc[k][a] = _mm256_add_epi8(acc[k][a], _mm256_shuffle_epi8(weight[a], v[k]));            \
    if constexpr (odd) plain[k] = _mm256_sub_epi8(plain[k], _mm256_cmpgt_epi8(v[k], floor));   \
  }
      // Unrolled where the counters leave registers to spare (AVX2: up to 3 groups, about
      // 30% fewer instructions per byte; with more, its 16 registers spill; AVX-512VL has 32).
      const size_t stop = m == end ? m - 1 : m;  // the last byte loads no rows past the end
      if constexpr (A <= PF_PAIRED_UNROLLED_COUNTERS) {
#pragma GCC unroll 5
        for (size_t i = n; i < stop; ++i) { PF_NIBBLE_STEP(true) }
      } else {
        for (size_t i = n; i < stop; ++i) { PF_NIBBLE_STEP(true) }
      }
      for (size_t i = stop; i < m; ++i) { PF_NIBBLE_STEP(false) }
#undef PF_NIBBLE_STEP
    // (The counters' splitting and widening stay loops: unrolled, the kernel ran 10% slower.)
      for (int k = 0; k < K; ++k)
        for (int g = 0; g < 2 * A; ++g) {
          const __m256i nibble = g % 2 ? _mm256_srli_epi16(acc[k][g / 2], 4) : acc[k][g / 2];
          __m256i* into = reinterpret_cast<__m256i*>(counted[k][g]);
          _mm256_store_si256(into, _mm256_add_epi8(_mm256_load_si256(into),
                                                   _mm256_and_si256(nibble, low)));
        }
    }
    if constexpr (odd)
      for (int k = 0; k < K; ++k)
        _mm256_store_si256(reinterpret_cast<__m256i*>(counted[k][G - 1]), plain[k]);
    for (int k = 0; k < K; ++k)
      for (int g = 0; g < G; ++g) pair_add_counts(counted[k][g], lanes, k, g);
  }
  for (int k = 0; k < K; ++k) pair_store(v[k], lanes, k);
}

}  // namespace v1
}  // namespace parafuse::fsm

#undef PF_PAIRED_TARGET
#undef PF_PAIRED
#undef PF_PAIRED_UNROLLED_COUNTERS
