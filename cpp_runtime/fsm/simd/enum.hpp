// parafuse boostfsm runtime: `enum` by SIMD enumeration (Mytkowicz, Musuvathi and Schulte,
// "Data-parallel finite-state machines", ASPLOS 2014). Every chunk, the first included,
// runs from all states at once in vector lanes (fsm/simd/kernels.hpp); one pass gives its
// transfer function and, per start state, its report counts. Composing the transfer
// functions gives each chunk's true start, and the counts of that start's lane are the
// chunk's counts: no chunk is walked twice. Matches (or more groups of reporting states
// than plan.counts() takes) need the positions: then the chunks are walked again from
// their true starts, as the other schemes do.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "fsm/core/engine.hpp"
#include "fsm/simd/kernels.hpp"

namespace parafuse::fsm {
inline namespace v1 {

inline const char* simd_path_words(const SimdPlan& plan) {
  switch (plan.path) {
    case SimdPath::ssse3: return "SSSE3 pshufb, 16 lanes";
    case SimdPath::avx2:
      return plan.states <= 16 ? (plan.byte_pairs ? "AVX2 vpshufb, 16 lanes, two bytes per step"
                                                  : "AVX2 vpshufb, 16 lanes")
             : plan.states <= 32 ? "AVX2 vpshufb composed from 2 blocks, 32 lanes"
                                 : "AVX2 vpshufb composed from 4 blocks, 64 lanes";
    case SimdPath::avx512vl: return "AVX-512VL vpshufb, 16 lanes, 32 registers";
    case SimdPath::avx512vbmi:
      return plan.states <= kSimdNarrowStates ? "AVX-512 VBMI vpermb, 64 lanes"
             : plan.states <= 128 ? "AVX-512 VBMI vpermi2b, 128 lanes in 2 registers"
                                  : "AVX-512 VBMI two vpermi2b and a blend on bit 7, 256 lanes in "
                                    "up to 4 registers";
    default: return "scalar lanes, no vector instructions";
  }
}

// Bound on the per-chunk counts kept (chunks x groups x 256 lanes): past it, recount.
constexpr size_t kSimdCountEntries = size_t(1) << 24;

// Whether the paths from every state have met after data[0, length).
inline bool simd_paths_meet(const SimdPlan& plan, const uint8_t* data, size_t length) {
  SimdLane lane;
  lane.data = data;
  lane.length = length;
  lane.start_everywhere(plan.states);
  simd_summarize(plan, &lane, 1, 0);
  return std::all_of(lane.state, lane.state + plan.states,
                     [&](uint8_t state) { return state == lane.state[0]; });
}

constexpr size_t kCachedPlans = 64;

// Plans are built once per process for the same tables and SIMD option (256 rows of the
// machine's steps, which short runs such as auto's probes would otherwise pay each time):
// the copy returned shares the cached table, which is never freed.
template <class Entry>
SimdPlan Engine<Entry>::simd_plan() const {
  const char* variable = std::getenv("PARAFUSE_FSM_SIMD");
  const auto key = std::make_tuple(t_.table, t_.states, t_.report_floor, t_.tag_list,
                                   simd_ + "|" + (variable ? variable : ""));
  static std::mutex guard;
  static std::map<decltype(key), SimdPlan> plans;
  {
    const std::lock_guard<std::mutex> lock(guard);
    const auto found = plans.find(key);
    if (found != plans.end()) {
      SimdPlan copy = found->second;
      copy.storage.clear();  // `next` stays in the cached plan's storage
      copy.next = found->second.next;
      return copy;
    }
  }
  SimdPlan plan =
      make_simd_plan(t_, simd_, [this](uint32_t offset, uint8_t byte) { return m_.step(offset, byte); });
  const std::lock_guard<std::mutex> lock(guard);
  if (plans.size() >= kCachedPlans) return plan;
  const SimdPlan& kept = plans.emplace(key, std::move(plan)).first->second;
  SimdPlan copy = kept;
  copy.storage.clear();
  copy.next = kept.next;
  return copy;
}

template <class Entry>
std::string Engine<Entry>::run_simd_enum(const SimdPlan& plan) {
  const size_t count = chunks_.size();
  const bool counted = !matches_ && plan.counts() &&
                       count * plan.groups * kSimdLanes <= kSimdCountEntries;
  const int groups = counted ? int(plan.groups) : 0;
  std::vector<uint64_t> ge(counted ? count * plan.groups * kSimdLanes : 0, 0);
  each_group(all_from(0), [&](const size_t* group, int members) {
    SimdLane lanes[kLanes];
    for (int k = 0; k < members; ++k) {
      const Chunk& chunk = chunks_[group[k]];
      lanes[k].data = data_ + chunk.begin;
      lanes[k].length = chunk.length();
      lanes[k].start_everywhere(plan.states);
      lanes[k].ge = counted ? ge.data() + group[k] * plan.groups * kSimdLanes : nullptr;
    }
    simd_summarize(plan, lanes, members, groups);
    for (int k = 0; k < members; ++k) {
      Chunk& chunk = chunks_[group[k]];
      chunk.map.resize(t_.states);
      for (uint32_t s = 0; s < t_.states; ++s)
        chunk.map[s] = uint32_t(plan.from_plan[lanes[k].state[plan.to_plan[s]]]) << t_.shift;
    }
  }, "simd enumerate");
  sequential("compose", [&] {
    chunks_[0].finish = chunks_[0].map[t_.start];
    final_ = compose_known_starts();
    if (!counted) return;
    uint64_t* hist = totals();
    for (size_t c = 0; c < count; ++c) {
      const uint64_t* mine = ge.data() + c * plan.groups * kSimdLanes;
      const uint32_t lane = plan.to_plan[chunks_[c].start >> t_.shift];
      for (uint32_t g = 0; g < plan.groups; ++g) {
        const uint64_t above = g + 1 < plan.groups ? mine[(g + 1) * kSimdLanes + lane] : 0;
        hist[plan.group_state[g] - t_.report_floor] += mine[g * kSimdLanes + lane] - above;
      }
    }
  });
  if (matches_) {
    walk_known(all_from(0));
  } else if (!counted) {
    each_group(all_from(0), [&](const size_t* group, int members) {
      Lane lanes[kLanes];
      for (int k = 0; k < members; ++k) {
        const Chunk& chunk = chunks_[group[k]];
        lanes[k] = Lane{data_ + chunk.begin, chunk.length(), chunk.begin, chunk.start};
      }
      Counters counting = counters();
      count_lane_group(m_, lanes, counting, members);
    }, "recount");
  }
  std::ostringstream reason;
  reason << "SIMD enumeration (" << simd_path_words(plan)
         << (plan.one_byte_why.empty() ? "" : ", one byte per step: " + plan.one_byte_why)
         << "): " << count
         << " chunks each ran from all " << t_.states << " states at once in one pass";
  if (counted)
    reason << ", counting reports per start state, then composed the chunks' transfer "
           << "functions and took each chunk's counts from its true start";
  else if (matches_)
    reason << ", then composed and walked again from the true starts for the matches";
  else
    reason << ", then composed and recounted from the true starts (" << plan.groups
           << " groups of reporting states: per-lane counts keep at most " << kSimdMaxGroups
           << ", or " << kSimdPairedMaxGroups << " for up to 16 states on AVX2 or AVX-512VL)";
  return reason.str();
}

}  // namespace v1
}  // namespace parafuse::fsm
