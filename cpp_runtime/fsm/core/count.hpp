// parafuse boostfsm runtime: counting visits of reporting states while K lanes walk
// in lockstep (walk.hpp), in one of three ways chosen per block of input by the report
// rate of the block before:
//   sparse  `if (offset >= floor) ++hist[...]`: one branch, well predicted while reports
//           are rare, mispredicted about once per report when they are not;
//   packed  (at most 8 reporting states) no branch, no store: `acc += inc[state]` adds 1
//           to an 8-bit field of a register, unpacked into hist every few hundred steps;
//   dense   (small tables) no branch: `++dense[offset + slot]` counts every state; each
//           lane and unrolled position has its own slot (rows have >= kSlots entries),
//           so a state visited many times in a row does not chain increments in memory.
#pragma once

#include <algorithm>
#include <cstdint>

#include "fsm/core/walk.hpp"

namespace parafuse::fsm {
inline namespace v1 {

constexpr uint32_t kSlots = 8, kPackedStates = 8;
constexpr size_t kBlock = size_t(1) << 14;  // steps per lane between choices of counting
// The first block is shorter, so that a walk of a few KiB (auto's probes of short windows,
// runs of many chunks) leaves sparse counting where reports are dense. (With a first
// block of 16 KiB per lane counted sparsely, `auto` times 4 interleaved walks of a machine
// that reports at every byte at half their speed over whole chunks, and picks `seq`.)
constexpr size_t kFirstBlock = size_t(1) << 10;
enum class Counting { sparse, packed, dense };

struct Counters {
  uint64_t* hist;         // [reporting states]
  uint32_t* dense;        // [states << shift] or null
  const uint64_t* inc;    // [states]: 1 << (8 * reporting index), 0 for others; or null
  uint32_t floor_offset, shift, rows;
  uint64_t pending = 0;   // steps counted densely since the last flush (each slot <= this)
  uint32_t* modes = nullptr;  // or: bit `mode` set for each mode a block was counted in
  // The mode of the first block, and where to leave the mode the last block chose (or
  // null): auto's timed walks (fsm/auto/rates.hpp) count a window of a few KiB in the mode
  // a run settles in after its first block, not in the first block's.
  Counting first = Counting::sparse;
  Counting* settled = nullptr;

  uint64_t dense_reports() const {
    uint64_t total = 0;
    for (uint32_t row = floor_offset; row < rows; row += 1u << shift)
      for (uint32_t slot = 0; slot < kSlots; ++slot) total += dense[row + slot];
    return total;
  }
  void flush() {
    for (uint32_t row = floor_offset; row < rows; row += 1u << shift) {
      uint64_t& count = hist[(row - floor_offset) >> shift];
      for (uint32_t slot = 0; slot < kSlots; ++slot) count += dense[row + slot], dense[row + slot] = 0;
    }
    pending = 0;
  }
  uint64_t unpack(uint64_t fields) const {
    uint64_t total = 0;
    for (uint32_t r = 0; fields; ++r, fields >>= 8) hist[r] += fields & 255, total += fields & 255;
    return total;
  }
  // Sparse costs a misprediction per report or so, packed a load and an add per step,
  // dense an increment in memory per step. Leaving a branch-free mode needs half the rate.
  Counting next(Counting now, uint64_t reports, uint64_t steps) const {
    const uint64_t stay = now == Counting::sparse ? 1 : 2;
    if (inc && reports * 32 * stay > steps) return Counting::packed;
    if (dense && reports * 8 * stay > steps) return Counting::dense;
    return Counting::sparse;
  }
};

// Steps K lanes over [begin, end) of each; returns the reports counted.
template <int K, Counting Mode, class Entry>
inline uint64_t count_block(const TypedTable<Entry>& m, uint32_t* state,
                            const uint8_t* const* data, size_t begin, size_t end,
                            Counters& c) {
  constexpr int U = K >= int(kSlots) ? 1 : int(kSlots) / K;  // unrolled positions
  uint32_t s[K];
  const uint8_t* d[K];
  for (int k = 0; k < K; ++k) s[k] = state[k], d[k] = data[k];
  uint64_t* const hist = c.hist;
  uint32_t* const dense = c.dense;
  const uint64_t* const inc = c.inc;
  const uint32_t floor_offset = c.floor_offset, shift = c.shift;
  uint64_t reports = 0;
  if constexpr (Mode == Counting::packed) {
    constexpr size_t kFlush = 254 / (K + K % 2);  // steps per flush: each field stays < 256
    for (size_t b = begin; b < end; b += kFlush) {
      const size_t e = std::min(end, b + kFlush);
      uint64_t acc[2] = {0, 0};
#pragma GCC unroll 2
      for (size_t i = b; i < e; ++i) {
#pragma GCC unroll 8
        for (int k = 0; k < K; ++k) {
          s[k] = m.step(s[k], d[k][i]);
          acc[k & 1] += inc[s[k] >> shift];
        }
      }
      reports += c.unpack(acc[0]) + c.unpack(acc[1]);
    }
  } else {
    size_t i = begin;
    auto visit = [&](int k, uint32_t slot) {
      if constexpr (Mode == Counting::dense) ++dense[s[k] + slot];
      else if (__builtin_expect(s[k] >= floor_offset, 0))
        ++hist[(s[k] - floor_offset) >> shift], ++reports;
    };
    for (; i + U <= end; i += U) {
#pragma GCC unroll 8
      for (int u = 0; u < U; ++u) {
#pragma GCC unroll 8
        for (int k = 0; k < K; ++k) s[k] = m.step(s[k], d[k][i + u]), visit(k, uint32_t(k + K * u) % kSlots);
      }
    }
    for (; i < end; ++i)
      for (int k = 0; k < K; ++k) s[k] = m.step(s[k], d[k][i]), visit(k, uint32_t(k));
  }
  for (int k = 0; k < K; ++k) state[k] = s[k];
  return reports;
}

template <int K, class Entry>
inline uint64_t count_block(const TypedTable<Entry>& m, Counting mode, uint32_t* state,
                            const uint8_t* const* data, size_t begin, size_t end, Counters& c) {
  if (mode == Counting::packed) return count_block<K, Counting::packed>(m, state, data, begin, end, c);
  if (mode == Counting::sparse) return count_block<K, Counting::sparse>(m, state, data, begin, end, c);
  if (c.pending + kBlock >= (uint64_t(1) << 32)) c.flush();
  const uint64_t before = c.dense_reports();
  count_block<K, Counting::dense>(m, state, data, begin, end, c);
  c.pending += end - begin;
  return c.dense_reports() - before;
}

// Count the visits of K lanes in lockstep over their common length; then each lane
// finishes alone.
template <int K, class Entry>
inline void count_lanes(const TypedTable<Entry>& m, Lane* lanes, Counters& c) {
  size_t common = lanes[0].length;
  for (int k = 1; k < K; ++k) common = std::min(common, lanes[k].length);
  uint32_t state[K];
  const uint8_t* data[K];
  for (int k = 0; k < K; ++k) state[k] = lanes[k].state, data[k] = lanes[k].data;
  Counting mode = c.first;
  for (size_t begin = 0; begin < common;) {
    const size_t end = std::min(common, begin + (begin ? kBlock : kFirstBlock));
    if (c.modes) *c.modes |= 1u << unsigned(mode);
    const uint64_t reports = count_block<K>(m, mode, state, data, begin, end, c);
    mode = c.next(mode, reports, (end - begin) * K);
    begin = end;
  }
  if (c.settled) *c.settled = mode;
  if (c.pending) c.flush();
  for (int k = 0; k < K; ++k) {
    const uint8_t* rest = data[k] + common;
    count_block<1, Counting::sparse>(m, &state[k], &rest, 0, lanes[k].length - common, c);
    lanes[k].state = state[k];
  }
}

template <class Entry>
inline void count_lane_group(const TypedTable<Entry>& m, Lane* lanes, Counters& c, int count) {
  switch (count) {
    case 4: count_lanes<4>(m, lanes, c); break;
    case 3: count_lanes<3>(m, lanes, c); break;
    case 2: count_lanes<2>(m, lanes, c); break;
    default: count_lanes<1>(m, lanes, c); break;
  }
}

}  // namespace v1
}  // namespace parafuse::fsm
