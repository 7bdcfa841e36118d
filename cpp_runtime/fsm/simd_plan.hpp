// parafuse boostfsm runtime: SIMD enumeration's data. A *plan* renumbers a machine of at
// most 64 states for vector lanes: lane p of a vector holds the current state of the path
// that started in state p, and one byte advances every lane at once by looking the lanes
// up in that byte's row of `next` (one shuffle: fsm/simd_kernels.hpp). Reporting states
// with the same tags form a *group*, numbered contiguously from `lo[g]`, so that a lane
// is counted by comparisons alone: `ge[g][p]` counts the bytes after which lane p was in a
// state >= lo[g]; group g's visits are ge[g] - ge[g+1]. One pass over a chunk gives its
// whole summary: the end state and the per-group counts from every start state.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "fsm/cpu_features.hpp"
#include "fsm/tables.hpp"

namespace parafuse::fsm {
inline namespace v1 {

constexpr uint32_t kSimdLanes = 64, kSimdMaxGroups = 4;
// Two chunks per AVX2 register (machines of up to 16 states) leave registers for more.
constexpr uint32_t kSimdPairedMaxGroups = 8;

struct SimdPlan {
  SimdPath path = SimdPath::none;
  std::string why_not;  // when path is none: why the scalar enumeration runs instead
  uint32_t states = 0, groups = 0;
  uint32_t lo[kSimdPairedMaxGroups + 1] = {};  // group g is plan states [lo[g], lo[g + 1])
  std::vector<uint32_t> group_state;     // an internal state of each group (same tags)
  std::vector<uint8_t> to_plan;          // [states] internal -> plan number
  std::vector<uint8_t> from_plan;        // [states] plan number -> internal
  std::vector<uint8_t> storage;          // next, 64-byte aligned inside
  const uint8_t* next = nullptr;         // [256][64]: the plan state after byte b from lane p
  bool paired() const { return path == SimdPath::avx2 && states <= 16; }
  bool counts() const {
    return groups <= kSimdMaxGroups || (paired() && groups <= kSimdPairedMaxGroups);
  }
};

constexpr size_t kSimdFlush = 255;  // bytes between widenings of the kernels' 8-bit counts

inline void add_counts(uint64_t* ge, const uint8_t* counted, uint32_t lanes) {
  for (uint32_t p = 0; p < lanes; ++p) ge[p] += counted[p];
}

// One chunk's run: its bytes, the lanes' states (the identity at first, the end states
// after) and its counts ge[g * 64 + p].
struct SimdLane {
  const uint8_t* data = nullptr;
  size_t length = 0;
  alignas(64) uint8_t state[kSimdLanes] = {};
  uint64_t* ge = nullptr;  // [groups][64], zeroed by the caller; null when not counting
  void start_everywhere(uint32_t states) {
    for (uint32_t p = 0; p < kSimdLanes; ++p) state[p] = uint8_t(p < states ? p : 0);
  }
};

// The tags of internal state s as a key.
inline std::vector<uint32_t> tag_key(const Tables& t, uint32_t s) {
  return std::vector<uint32_t>(t.tag_list + t.tag_begin[s], t.tag_list + t.tag_begin[s + 1]);
}

// The path of the machine (states, CPU, PARAFUSE_FSM_SIMD) and its renumbered table.
// `step(offset, byte)` is the machine's transition on pre-multiplied offsets.
template <class Step>
SimdPlan make_simd_plan(const Tables& t, const std::string& option, Step step) {
  SimdPlan plan;
  const SimdRequest request = simd_request(option);
  const uint32_t n = t.states;
  if (request.forced && request.path == SimdPath::none) {
    plan.why_not = "SIMD path none was asked for: scalar enumeration";
    return plan;
  }
  if (n > kSimdLanes) {
    plan.why_not = "SIMD enumeration takes at most 64 states";
    return plan;
  }
  if (request.forced) {
    if (request.path == SimdPath::ssse3 && n > 16) {
      plan.why_not = "SIMD path ssse3 takes at most 16 states";
      return plan;
    }
    plan.path = request.path;
  } else {
    // pshufb (1-cycle latency) for 16 lanes; vpermb for 64; composed pshufb pays up to 32.
    const SimdPath best = best_cpu_path();
    if (best == SimdPath::scalar) plan.path = SimdPath::none;  // lanes in C++ do not pay
    else if (n <= 16) plan.path = best == SimdPath::avx512vbmi ? SimdPath::avx2 : best;
    else if (best == SimdPath::avx512vbmi) plan.path = best;
    else if (best == SimdPath::avx2 && n <= 32) plan.path = best;
    if (plan.path == SimdPath::none) {
      plan.why_not = std::string("this CPU's vector instructions (") +
                     simd_path_name(best) + ") do not pay for " + std::to_string(n) + " states";
      return plan;
    }
  }
  plan.states = n;
  // Non-reporting states first, as numbered; then reporting states grouped by tags.
  std::map<std::vector<uint32_t>, std::vector<uint32_t>> by_tags;
  std::vector<std::vector<uint32_t>> order;  // groups in order of their first state
  for (uint32_t s = t.report_floor; s < n; ++s) {
    auto& members = by_tags[tag_key(t, s)];
    if (members.empty()) order.push_back(tag_key(t, s));
    members.push_back(s);
  }
  plan.groups = uint32_t(order.size());
  plan.to_plan.assign(n, 0);
  plan.from_plan.assign(n, 0);
  uint32_t next_number = 0;
  for (uint32_t s = 0; s < t.report_floor; ++s) plan.from_plan[next_number++] = uint8_t(s);
  for (uint32_t g = 0; g < plan.groups; ++g) {
    if (g <= kSimdPairedMaxGroups) plan.lo[g] = next_number;
    plan.group_state.push_back(by_tags[order[g]].front());
    for (uint32_t s : by_tags[order[g]]) plan.from_plan[next_number++] = uint8_t(s);
  }
  if (plan.groups <= kSimdPairedMaxGroups) plan.lo[plan.groups] = n;
  for (uint32_t p = 0; p < n; ++p) plan.to_plan[plan.from_plan[p]] = uint8_t(p);
  plan.storage.assign(256 * kSimdLanes + 64, 0);
  uint8_t* next = plan.storage.data() + (64 - reinterpret_cast<uintptr_t>(plan.storage.data()) % 64);
  for (uint32_t b = 0; b < 256; ++b)
    for (uint32_t p = 0; p < n; ++p)
      next[b * kSimdLanes + p] =
          plan.to_plan[step(plan.from_plan[p] << t.shift, uint8_t(b)) >> t.shift];
  plan.next = next;
  return plan;
}

// The portable path: every lane in plain C++, counting as the vector paths do.
template <int G>
void simd_run_scalar(const SimdPlan& p, SimdLane& lane, size_t begin, size_t end) {
  uint8_t v[kSimdLanes];
  std::memcpy(v, lane.state, kSimdLanes);
  const uint32_t n = p.states;
  for (size_t i = begin; i < end; ++i) {
    const uint8_t* row = p.next + size_t(lane.data[i]) * kSimdLanes;
    for (uint32_t s = 0; s < n; ++s) v[s] = row[v[s]];
    for (int g = 0; g < G; ++g)
      for (uint32_t s = 0; s < n; ++s) lane.ge[g * kSimdLanes + s] += v[s] >= p.lo[g];
  }
  std::memcpy(lane.state, v, kSimdLanes);
}

}  // namespace v1
}  // namespace parafuse::fsm
