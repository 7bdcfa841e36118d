// parafuse boostfsm runtime: the summary of a whole byte range by SIMD enumeration, for
// combining ranges that ran apart (fsm/mpi/run.hpp): the range's transfer function (the
// state after it from every state) and, where the plan counts its groups, the counts per
// tag from every start state. The range is split into chunks, kLanes per thread, each
// run from all states at once (fsm/simd/kernels.hpp); composing the chunks' transfer
// functions from each start state gives the range's, and adds up that path's counts.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "fsm/core/walk.hpp"
#include "fsm/simd/kernels.hpp"

namespace parafuse::fsm {
inline namespace v1 {

constexpr size_t kSummaryChunkBytes = size_t(64) << 10;  // smaller chunks do not pay

struct RangeSummary {
  std::vector<uint32_t> after;   // [states]: internal state after the range, from each
  std::vector<uint64_t> counts;  // [states][tags] when `counted`: reports from each start
  bool counted = false;
};

// The plan for machine `t` (fsm/simd/plan.hpp) without an Engine: `simd` as RunOptions::simd.
inline SimdPlan plan_for_tables(const Tables& t, const std::string& simd) {
  const auto plan = [&](auto entry) {
    const TypedTable<decltype(entry)> m(t);
    return make_simd_plan(t, simd, [&](uint32_t offset, uint8_t byte) { return m.step(offset, byte); });
  };
  switch (t.entry_bytes) {
    case 1: return plan(uint8_t());
    case 2: return plan(uint16_t());
    default: return plan(uint32_t());
  }
}

// Summarises data[0, n) with `threads` threads; counts when `count` and the plan can.
inline RangeSummary summarize_range(const Tables& t, const SimdPlan& plan, const uint8_t* data,
                                    size_t n, int threads, bool count) {
  RangeSummary summary;
  summary.counted = count && plan.counts();
  const uint32_t groups = summary.counted ? plan.groups : 0;
  const size_t chunks = std::max<size_t>(
      1, std::min(size_t(threads) * kLanes, n / kSummaryChunkBytes));
  std::vector<SimdLane> lanes(chunks);
  std::vector<uint64_t> ge(chunks * groups * kSimdLanes, 0);
  for (size_t c = 0; c < chunks; ++c) {
    const size_t begin = n * c / chunks, end = n * (c + 1) / chunks;
    lanes[c].data = data + begin;
    lanes[c].length = end - begin;
    lanes[c].start_everywhere(plan.states);
    lanes[c].ge = groups ? ge.data() + c * groups * kSimdLanes : nullptr;
  }
  const long units = long((chunks + kLanes - 1) / kLanes);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (long u = 0; u < units; ++u) {
    const size_t first = size_t(u) * kLanes;
    simd_summarize(plan, lanes.data() + first, int(std::min<size_t>(kLanes, chunks - first)),
                   int(groups));
  }
  summary.after.assign(t.states, 0);
  if (summary.counted) summary.counts.assign(size_t(t.states) * t.tag_count, 0);
  std::vector<uint64_t> visits(groups);
  for (uint32_t s = 0; s < t.states; ++s) {
    uint32_t lane = plan.to_plan[s];
    std::fill(visits.begin(), visits.end(), 0);
    for (size_t c = 0; c < chunks; ++c) {
      const uint64_t* mine = ge.data() + c * groups * kSimdLanes;
      for (uint32_t g = 0; g < groups; ++g)
        visits[g] += mine[g * kSimdLanes + lane] - (g + 1 < groups ? mine[(g + 1) * kSimdLanes + lane] : 0);
      lane = lanes[c].state[lane];
    }
    summary.after[s] = plan.from_plan[lane];
    for (uint32_t g = 0; g < groups; ++g) {
      const uint32_t state = plan.group_state[g];
      for (uint32_t i = t.tag_begin[state]; i < t.tag_begin[state + 1]; ++i)
        summary.counts[size_t(s) * t.tag_count + (t.tag_list[i] & ~kDelayed)] += visits[g];
    }
  }
  return summary;
}

}  // namespace v1
}  // namespace parafuse::fsm
