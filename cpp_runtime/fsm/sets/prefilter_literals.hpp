// parafuse boostfsm runtime: the literal pass of a prefiltered engine
// (fsm/sets/prefilter_engine.hpp) in exact chunks. The literal DFA is the unanchored DFA of
// factors of at most `longest` bytes, without assertions: the reports from an offset on
// depend only on the `longest - 1` bytes before it (a factor that ends later starts
// there or later), so a run begun in the start state that many bytes before a chunk
// reports exactly the chunk's factor ends. No guess, no validation: chunks run on
// every thread, kLiteralLanes of them in lockstep per thread (fsm/core/walk.hpp) so that their
// table loads overlap, one thread or many.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "fsm/core/tables.hpp"
#include "fsm/core/walk.hpp"
#include "fsm/sets/prefilter_tables.hpp"

namespace parafuse::fsm {
inline namespace v1 {

// Chunks a thread walks in lockstep (8 ran slower on Nosey Parker: more instructions,
// registers spilled).
constexpr int kLiteralLanes = kLanes;

// A factor end and its pattern (index in PrefilterTables::confirms) in one word:
// offset << kHitPatternBits | pattern.
constexpr unsigned kHitPatternBits = 16;
// Room reserved for a chunk's factor ends: one per kHitReserveBytes of the chunk, at most
// kHitReserveEnds for all chunks together. Only the pages the ends fill are touched;
// growing from empty copied each list every time it doubled, into fresh pages, and
// unmapped the old ones (Nosey Parker over web logs, 1.3 million ends in 32 MiB, medians
// of 15 interleaved rounds: the run 64 -> 57 ms at one thread, 35 -> 31 ms at two; over
// source, 270,000 ends, the same within the noise).
constexpr size_t kHitReserveBytes = 16;
constexpr size_t kHitReserveEnds = size_t(1) << 25;  // 256 MiB of address space

// Appends the offset with the pattern of every tag of a reporting state (none is delayed;
// `confirm_of`: a tag's pattern).
struct HitVisit {
  const Tables* tables;
  const uint32_t* confirm_of;
  std::vector<uint64_t>* out;
  void operator()(uint32_t offset, uint64_t position) const {
    const uint32_t state = offset >> tables->shift;
    for (uint32_t i = tables->tag_begin[state]; i < tables->tag_begin[state + 1]; ++i)
      out->push_back((position + 1) << kHitPatternBits | confirm_of[tables->tag_list[i]]);
  }
};

template <class Entry>
void literal_chunks_typed(const Tables& t, const uint8_t* data, size_t n, size_t lookback,
                          size_t groups, int threads, const std::vector<uint32_t>& confirm_of,
                          std::vector<std::vector<uint64_t>>& out, std::vector<double>& units) {
  const TypedTable<Entry> m(t);
  const size_t chunks = groups * kLiteralLanes;
  out.assign(chunks, {});
  units.assign(groups, 0);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (size_t g = 0; g < groups; ++g) {
    const double began = omp_get_wtime();
    Lane lanes[kLiteralLanes];
    HitVisit visits[kLiteralLanes];
    for (int k = 0; k < kLiteralLanes; ++k) {
      const size_t c = g * kLiteralLanes + size_t(k);
      const size_t begin = n * c / chunks, end = n * (c + 1) / chunks;
      const size_t scan = begin > lookback ? begin - lookback : 0;
      const uint32_t start = t.start << t.shift;
      const uint32_t state = walk_one(m, data + scan, begin - scan, scan, start, NoVisit{});
      lanes[k] = Lane{data + begin, end - begin, begin, state};
      out[c].reserve(std::min((end - begin) / kHitReserveBytes, kHitReserveEnds / chunks));
      visits[k] = HitVisit{&t, confirm_of.data(), &out[c]};
    }
    walk_lanes_noting<kLiteralLanes>(m, lanes, visits);
    units[g] = omp_get_wtime() - began;
  }
}

// The factor ends in data[0, n) with their patterns (kHitPatternBits), by offset, as one
// list per chunk (the chunks in order): `groups` groups of kLiteralLanes chunks, each
// chunk started `lookback` (>= longest - 1) bytes early; `units`: each group's seconds.
inline std::vector<std::vector<uint64_t>> literal_hits(const Tables& t, const uint8_t* data,
                                                       size_t n, size_t lookback, size_t groups,
                                                       int threads,
                                                       const std::vector<uint32_t>& confirm_of,
                                                       std::vector<double>& units) {
  std::vector<std::vector<uint64_t>> out;
  groups = std::max<size_t>(1, groups);
  const auto walk = [&](auto entry) {
    literal_chunks_typed<decltype(entry)>(t, data, n, lookback, groups, threads, confirm_of, out,
                                          units);
  };
  switch (t.entry_bytes) {
    case 1: walk(uint8_t()); break;
    case 2: walk(uint16_t()); break;
    default: walk(uint32_t()); break;
  }
  return out;
}

}  // namespace v1
}  // namespace parafuse::fsm
