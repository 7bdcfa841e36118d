// parafuse boostfsm runtime: the inner loops. A *lane* is one run of the machine
// over a byte range; up to kLanes lanes of one thread step in lockstep, so that
// their independent table lookups overlap (one DFA run is a chain of dependent
// loads and leaves most of a core idle). States are pre-multiplied row offsets in bytes
// (`state << shift`); a state reports when its offset is >= the report floor.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fsm/core/match.hpp"
#include "fsm/core/tables.hpp"

namespace parafuse::fsm {
inline namespace v1 {

constexpr int kLanes = 4;
constexpr size_t kNoMiss = ~size_t(0);

// The entry at byte `offset` of the column of the byte's class, as one load: the column
// depends only on the input, so the dependency chain from state to state is the load
// alone, and offsets in bytes spare it a scaled index. The empty asm keeps the compiler
// from folding the column back into `offset + class`.
template <class Entry>
inline uint32_t step_column(const Entry* table, const uint8_t* byte_class, uint32_t offset,
                            uint8_t byte) {
  const char* column = reinterpret_cast<const char*>(table) + byte_class[byte] * sizeof(Entry);
  __asm__("" : "+r"(column));
  return *reinterpret_cast<const Entry*>(column + offset);
}

// The machine's table with its entry type.
template <class Entry>
struct TypedTable {
  const Entry* table;
  const uint8_t* byte_class;
  uint32_t shift, floor_offset;

  explicit TypedTable(const Tables& t)
      : table(static_cast<const Entry*>(t.table)), byte_class(t.byte_class), shift(t.shift),
        floor_offset(t.report_floor_offset()) {}
  uint32_t step(uint32_t offset, uint8_t byte) const {
    return step_column(table, byte_class, offset, byte);
  }
};

struct Lane {
  const uint8_t* data;
  size_t length;
  uint64_t base;   // input offset of data[0]
  uint32_t state;  // offset; the state after the lane when the walk returns
};

struct NoVisit {
  void operator()(uint32_t, uint64_t) const {}
};

// Counts visits of reporting states: hist[(offset - floor) >> shift].
struct CountVisit {
  uint64_t* hist;
  uint32_t floor_offset, shift;
  void operator()(uint32_t offset, uint64_t) const { ++hist[(offset - floor_offset) >> shift]; }
};

// Appends (offset, tag) for every tag of a reporting state, and counts the visit. Delayed
// reports (offset - 1) make the list out of order by at most one offset: Engine::finish
// restores the order.
struct MatchVisit {
  CountVisit count;
  const Tables* tables;
  std::vector<Match>* out;
  void operator()(uint32_t offset, uint64_t position) const {
    count(offset, position);
    const uint32_t state = offset >> count.shift;
    for (uint32_t i = tables->tag_begin[state]; i < tables->tag_begin[state + 1]; ++i) {
      const uint32_t entry = tables->tag_list[i];
      out->push_back(Match{position + 1 - (entry >> 31), entry & ~kDelayed});
    }
  }
};

template <class Entry, class Visit>
inline uint32_t walk_one(const TypedTable<Entry>& m, const uint8_t* data, size_t length,
                         uint64_t base, uint32_t state, const Visit& visit) {
  const uint32_t floor_offset = m.floor_offset;
#pragma GCC unroll 8
  for (size_t i = 0; i < length; ++i) {
    state = m.step(state, data[i]);
    if (state >= floor_offset) visit(state, base + i);
  }
  return state;
}

// Walk `Count` lanes in lockstep over their common length, then finish each alone.
template <int Count, class Entry, class Visit>
inline void walk_lanes(const TypedTable<Entry>& m, Lane* lanes, const Visit* visits) {
  size_t common = lanes[0].length;
  for (int k = 1; k < Count; ++k) common = std::min(common, lanes[k].length);
  uint32_t state[Count];
  const uint8_t* data[Count];
  for (int k = 0; k < Count; ++k) state[k] = lanes[k].state, data[k] = lanes[k].data;
  const uint32_t floor_offset = m.floor_offset;
  for (size_t i = 0; i < common; ++i) {
#pragma GCC unroll 4
    for (int k = 0; k < Count; ++k) {
      state[k] = m.step(state[k], data[k][i]);
      if (state[k] >= floor_offset) visits[k](state[k], lanes[k].base + i);
    }
  }
  for (int k = 0; k < Count; ++k)
    lanes[k].state = walk_one(m, data[k] + common, lanes[k].length - common,
                              lanes[k].base + common, state[k], visits[k]);
}

// Visits noted in a block: (lane << 62 | index in the block << 32 | state offset).
constexpr size_t kNoteBlock = size_t(1) << 12;
static_assert(kLanes <= 4, "a note keeps the lane in its top two bits");

// walk_lanes for visits that append to lists: each lane's reporting visits are noted with
// a plain store, a block of kNoteBlock bytes at a time, and visited after the block. A
// call in the loop (a list's growth) makes the compiler keep the lanes' registers across
// it: Nosey Parker's literal pass took 1.5x as long. (The match pass of the C lexer
// sample, 1.2 million matches in 32 MiB, took the same time either way: there the
// matches' own cost rules.)
template <int Count, class Entry, class Visit>
inline void walk_lanes_noting(const TypedTable<Entry>& m, Lane* lanes, const Visit* visits) {
  thread_local std::vector<uint64_t> notes;
  size_t common = lanes[0].length;
  for (int k = 1; k < Count; ++k) common = std::min(common, lanes[k].length);
  notes.resize(std::min(common, kNoteBlock) * Count);
  uint32_t state[Count];
  for (int k = 0; k < Count; ++k) state[k] = lanes[k].state;
  const uint32_t floor_offset = m.floor_offset;
  for (size_t begin = 0; begin < common; begin += kNoteBlock) {
    const size_t length = std::min(kNoteBlock, common - begin);
    const uint8_t* data[Count];
    for (int k = 0; k < Count; ++k) data[k] = lanes[k].data + begin;
    uint64_t* note = notes.data();
    for (size_t i = 0; i < length; ++i) {
#pragma GCC unroll 4
      for (int k = 0; k < Count; ++k) {
        state[k] = m.step(state[k], data[k][i]);
        if (state[k] >= floor_offset)
          *note++ = uint64_t(k) << 62 | uint64_t(i) << 32 | state[k];
      }
    }
    for (const uint64_t* it = notes.data(); it != note; ++it) {
      const int k = int(*it >> 62);
      visits[k](uint32_t(*it), lanes[k].base + begin + ((*it >> 32) & 0x3fffffff));
    }
  }
  for (int k = 0; k < Count; ++k)
    lanes[k].state = walk_one(m, lanes[k].data + common, lanes[k].length - common,
                              lanes[k].base + common, state[k], visits[k]);
}

template <class Entry, class Visit>
inline void walk_lane_group(const TypedTable<Entry>& m, Lane* lanes, const Visit* visits,
                            int count) {
  switch (count) {
    case 4: walk_lanes<4>(m, lanes, visits); break;
    case 3: walk_lanes<3>(m, lanes, visits); break;
    case 2: walk_lanes<2>(m, lanes, visits); break;
    default: walk_lanes<1>(m, lanes, visits); break;
  }
}

// A fused-DFA lane: fused offsets, a histogram of reporting fused states, and where
// (if anywhere) the run left the stored part of a partial fused DFA.
struct FusedLane {
  const uint8_t* data;
  size_t length;
  uint32_t fused;        // offset; the fused state after the lane
  uint32_t* hist;        // [reporting fused states]
  size_t miss_at;        // index of the byte whose transition is not stored, or kNoMiss
  uint32_t miss_from;    // the fused offset before that byte
};

template <int Count, bool Partial>
inline void walk_fused_lanes(const Tables& t, FusedLane* lanes) {
  size_t longest = 0;
  for (int k = 0; k < Count; ++k) longest = std::max(longest, lanes[k].length);
  uint32_t fused[Count];
  for (int k = 0; k < Count; ++k) fused[k] = lanes[k].fused;
  const uint32_t* next = t.fused_next;
  const uint8_t* byte_class = t.byte_class;
  const uint32_t floor_offset = t.fused_floor_offset(), shift = t.fused_shift;
  const uint32_t restart = t.fused_start << shift;
  size_t common = longest;
  for (int k = 0; k < Count; ++k) common = std::min(common, lanes[k].length);
  auto step = [&](int k, size_t i) {
    uint32_t following = step_column(next, byte_class, fused[k], lanes[k].data[i]);
    if (Partial && following == kFusedMissing) {
      if (lanes[k].miss_at == kNoMiss) lanes[k].miss_at = i, lanes[k].miss_from = fused[k];
      following = restart;  // the rest of this lane is redone as enum; keep walking validly
    }
    fused[k] = following;
    if (following >= floor_offset) ++lanes[k].hist[(following - floor_offset) >> shift];
  };
  for (size_t i = 0; i < common; ++i) {
#pragma GCC unroll 4
    for (int k = 0; k < Count; ++k) step(k, i);
  }
  for (int k = 0; k < Count; ++k)
    for (size_t i = common; i < lanes[k].length; ++i) step(k, i);
  for (int k = 0; k < Count; ++k) lanes[k].fused = fused[k];
}

template <bool Partial>
inline void walk_fused_group(const Tables& t, FusedLane* lanes, int count) {
  switch (count) {
    case 4: walk_fused_lanes<4, Partial>(t, lanes); break;
    case 3: walk_fused_lanes<3, Partial>(t, lanes); break;
    case 2: walk_fused_lanes<2, Partial>(t, lanes); break;
    default: walk_fused_lanes<1, Partial>(t, lanes); break;
  }
}

// Runs from many start states at once over one range, merging paths that meet:
// the work per byte follows the number of distinct live states.
struct Enumerator {
  std::vector<uint32_t> live, remap, slot_of, mark, index;
  uint32_t epoch = 0;
  uint64_t steps = 0;  // lookups done, for reports
  size_t met = kNoMiss;  // with stop_when_met: bytes after which one path remained

  template <class Entry>
  void run(const TypedTable<Entry>& m, uint32_t states, const uint8_t* data, size_t length,
           const uint32_t* starts, size_t count, uint32_t* ends, bool stop_when_met = false) {
    met = kNoMiss;
    if (mark.size() != states) mark.assign(states, 0), index.assign(states, 0), epoch = 0;
    live.assign(starts, starts + count);
    slot_of.resize(count);
    for (size_t i = 0; i < count; ++i) slot_of[i] = uint32_t(i);
    merge(m.shift);
    // Merge after bytes 1, 2, 4, 8, 16, then every 16: most paths meet at once.
    constexpr size_t kMergeEvery = 16;
    for (size_t begin = 0; begin < length;) {
      const size_t end = std::min(length, begin + std::clamp<size_t>(begin, 1, kMergeEvery));
      if (live.size() == 1 && stop_when_met) {
        met = begin;  // every path is at live[0] after `begin` bytes
        break;
      }
      if (live.size() == 1) {
        live[0] = walk_one(m, data + begin, length - begin, 0, live[0], [](uint32_t, uint64_t) {});
        steps += length - begin;
        break;
      }
      uint32_t* paths = live.data();
      const size_t width = live.size();
      for (size_t i = begin; i < end; ++i) {
        const char* column =
            reinterpret_cast<const char*>(m.table) + m.byte_class[data[i]] * sizeof(Entry);
        for (size_t j = 0; j < width; ++j)
          paths[j] = *reinterpret_cast<const Entry*>(column + paths[j]);
      }
      steps += (end - begin) * width;
      merge(m.shift);
      begin = end;
    }
    if (ends)
      for (size_t i = 0; i < count; ++i) ends[i] = live[slot_of[i]];
  }

  // After run: the end state most starts reached (ties: the smallest offset).
  uint32_t most_frequent() {
    remap.assign(live.size(), 0);
    for (uint32_t slot : slot_of) ++remap[slot];
    size_t best = 0;
    for (size_t j = 1; j < live.size(); ++j)
      if (remap[j] > remap[best] || (remap[j] == remap[best] && live[j] < live[best])) best = j;
    return live[best];
  }

 private:
  // Keep one copy of each live state; renumber the slots of the starts.
  void merge(uint32_t shift) {
    if (++epoch == 0) std::fill(mark.begin(), mark.end(), 0), epoch = 1;
    remap.resize(live.size());
    size_t kept = 0;
    for (size_t j = 0; j < live.size(); ++j) {
      const uint32_t state = live[j] >> shift;
      if (mark[state] != epoch) mark[state] = epoch, index[state] = uint32_t(kept), live[kept++] = live[j];
      remap[j] = index[state];
    }
    if (kept == live.size()) return;
    live.resize(kept);
    for (auto& slot : slot_of) slot = remap[slot];
  }
};

}  // namespace v1
}  // namespace parafuse::fsm
