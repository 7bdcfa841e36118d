// parafuse boostfsm runtime: SIMD enumeration's data. A *plan* renumbers a machine of at
// most 256 states (one byte per lane) for vector lanes: lane p of a vector holds the current state of the path
// that started in state p, and one byte advances every lane at once by looking the lanes
// up in that byte's row of `next` (one shuffle: fsm/simd/kernels.hpp). Reporting states
// with the same tags form a *group*, numbered contiguously from `lo[g]`, so that a lane
// is counted by comparisons alone: `ge[g][p]` counts the bytes after which lane p was in a
// state >= lo[g]; group g's visits are ge[g] - ge[g+1]. One pass over a chunk gives its
// whole summary: the end state and the per-group counts from every start state.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "fsm/core/tables.hpp"
#include "fsm/simd/byte_pairs.hpp"
#include "fsm/simd/cpu_features.hpp"

namespace parafuse::fsm {
inline namespace v1 {

// kSimdLanes: the most states (lanes) a plan takes, and the stride of lane states and
// counts. kSimdRowBytes: the stride of `next` for plans of up to 64 states; wider plans
// (AVX-512 VBMI only, fsm/simd/kernels_wide.hpp) use rows of 128 or 256 bytes.
constexpr uint32_t kSimdLanes = 256, kSimdRowBytes = 64, kSimdNarrowStates = 64;
constexpr uint32_t kSimdMaxGroups = 4;
// Two groups per 8-bit counter: the paired kernels of up to 16 states (AVX2, AVX-512VL) count up to 8
// groups in its one pass. (The SSSE3 and VBMI vpermb kernels count 2 to 4 groups so, but
// past 4 their one pass ran slower than a pass without counts and a recount.)
constexpr uint32_t kSimdPairedMaxGroups = 8;

struct SimdKernels;  // below

struct SimdPlan {
  SimdPath path = SimdPath::none;
  const SimdKernels* kernels = nullptr;  // its tables' (fsm/simd/kernels.hpp simd_summarize)
  std::string why_not;  // when path is none: why the scalar enumeration runs instead
  uint32_t states = 0, groups = 0;
  uint32_t lo[kSimdPairedMaxGroups + 1] = {};  // group g is plan states [lo[g], lo[g + 1])
  std::vector<uint32_t> group_state;     // an internal state of each group (same tags)
  std::vector<uint8_t> to_plan;          // [states] internal -> plan number
  std::vector<uint8_t> from_plan;        // [states] plan number -> internal
  std::vector<uint8_t> storage;          // next, 64-byte aligned inside
  uint32_t row_bytes = kSimdRowBytes;    // 64; 128 or 256 past 64 states
  const uint8_t* next = nullptr;         // [256][row_bytes]: the plan state after byte b from lane p
  // Up to 16 states and one group on AVX2: the rows of two bytes per step
  // (fsm/simd/kernels_stride2.hpp), or null where the plan steps one byte at a time
  // (fsm/simd/byte_pairs.hpp make_simd_byte_pairs).
  std::shared_ptr<const SimdBytePairs> byte_pairs;
  std::string one_byte_why;  // where byte_pairs is null though not asked so: why
  bool paired() const {
    return (path == SimdPath::avx2 || path == SimdPath::avx512vl) && states <= 16;
  }
  bool wide() const { return states > kSimdNarrowStates; }
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

// The SIMD kernels a library compiled for its tables (Tables::simd_kernels; src/M_simd.cpp
// instantiates fsm/simd/kernels.hpp simd_summarize_fit<most, groups>): those for plans of
// one class of state counts (`most` 16: up to 16 states; 64: 17 to 64; 256: 65 to 256;
// 0: any) that count `groups` groups or none (-1: any count). A machine's plans always
// have its state count and count its groups or none, so its library compiles one class
// and one count; a pattern set one per distinct fit of its DFAs (simd_kernels_for picks
// each DFA's); the test drivers, whose tables vary, every plan's (emitters/fsm/simd_units.py).
struct SimdKernels {
  void (*summarize)(const SimdPlan&, SimdLane*, int count, int groups) = nullptr;
  int most = 0, groups = -1;
};

constexpr int simd_class_least(int most) { return most == 64 ? 17 : most == 256 ? 65 : 1; }
constexpr int simd_class_most(int most) { return most == 0 ? int(kSimdLanes) : most; }
// Whether kernels of class `most` run some plan of `lo` to `hi` states.
constexpr bool simd_fit_states(int most, int lo, int hi) {
  return lo <= simd_class_most(most) && hi >= simd_class_least(most);
}
// Whether kernels compiled for `groups` count `counted` groups (0: the states alone).
constexpr bool simd_fit_groups(int groups, int counted) {
  return groups < 0 || counted == 0 || counted == groups;
}

// Calls run(integral_constant<int, g>) for the group count `groups` (0 to Max; past Max,
// Max) where a unit compiled for `Groups` counts it (fsm/simd/plan.hpp simd_fit_groups).
template <int Max, int Groups, class Run>
void simd_with_groups(int groups, Run&& run) {
  const auto at = [&](auto g) {
    if constexpr (simd_fit_groups(Groups, decltype(g)::value)) run(g);
  };
  switch (groups) {
    case 0: at(std::integral_constant<int, 0>()); break;
    case 1: at(std::integral_constant<int, 1>()); break;
    case 2: at(std::integral_constant<int, 2>()); break;
    case 3: at(std::integral_constant<int, 3>()); break;
    case 4: at(std::integral_constant<int, 4>()); break;
    case 5: at(std::integral_constant<int, (5 < Max ? 5 : Max)>()); break;
    case 6: at(std::integral_constant<int, (6 < Max ? 6 : Max)>()); break;
    case 7: at(std::integral_constant<int, (7 < Max ? 7 : Max)>()); break;
    default: at(std::integral_constant<int, Max>()); break;
  }
}

// Why `kernels` do not run a plan of `states` states and `groups` groups; empty when they do.
inline std::string simd_kernels_why_not(const SimdKernels* kernels, uint32_t states,
                                        uint32_t groups) {
  if (!kernels) return "these tables came without SIMD kernels";
  if (simd_fit_states(kernels->most, int(states), int(states)) &&
      simd_fit_groups(kernels->groups, int(groups)))
    return "";
  return "the library's SIMD kernels were compiled for " +
         std::to_string(simd_class_least(kernels->most)) + " to " +
         std::to_string(simd_class_most(kernels->most)) + " states and " +
         std::to_string(kernels->groups) + (kernels->groups == 1 ? " group" : " groups") +
         " of reporting states, not " +
         std::to_string(states) + " and " + std::to_string(groups);
}

// The most states forced `path` takes: pshufb looks up 16 entries; AVX2 composes 64 from
// 16-entry blocks; VBMI takes 256 (vpermb 64, vpermi2b 128, two vpermi2b and a blend 256).
inline uint32_t simd_path_most_states(SimdPath path) {
  switch (path) {
    case SimdPath::ssse3:
    case SimdPath::avx512vl: return 16;
    case SimdPath::avx2: return kSimdNarrowStates;
    default: return kSimdLanes;
  }
}

// The path auto takes for `n` states on a CPU whose best path is `best` (none: the merging
// scalar enumeration; `vl`: the CPU has AVX-512 BW and VL). pshufb (1-cycle latency) for up
// to 16 lanes, two chunks per register on AVX2, compiled for AVX-512VL where the CPU has it
// (32 registers: every group count unrolled; 4+ groups run faster: docs/fsm.md); vpermb for
// 17-64, vpermi2b on two registers' tables for 65-128, and two vpermi2b and a blend for
// 129-256 (fsm/simd/kernels_wide.hpp); without VBMI, AVX2 composed from 16-entry blocks pays
// up to 32 states and not past them (measured: docs/fsm.md).
// fsm_compiler/analysis/simd_fit.py mirrors this choice.
inline SimdPath simd_auto_path(uint32_t n, SimdPath best, bool vl) {
  if (best == SimdPath::scalar) return SimdPath::none;  // lanes in plain C++ do not pay
  if (n <= 16) return vl ? SimdPath::avx512vl : best == SimdPath::avx512vbmi ? SimdPath::avx2 : best;
  if (best == SimdPath::avx512vl) best = SimdPath::avx2;  // past 16 states: the AVX2 kernels
  if (best == SimdPath::avx512vbmi) return n <= kSimdLanes ? best : SimdPath::none;
  if (best == SimdPath::avx2 && n <= 32) return best;
  return SimdPath::none;
}

// Why auto takes no vector path for `n` states (simd_auto_path gave none).
inline std::string simd_auto_why_not(uint32_t n, SimdPath best) {
  if (n > kSimdLanes) return "SIMD enumeration takes at most 256 states (one byte per lane)";
  if (best == SimdPath::avx512vl) best = SimdPath::avx2;  // past 16 states: the AVX2 kernels
  std::string why = std::string("this CPU's vector instructions (") + simd_path_name(best) +
                    ") do not pay for " + std::to_string(n) + " states";
  if (best == SimdPath::ssse3) return why + " (pshufb looks up 16 entries)";
  if (best == SimdPath::avx2)
    why += n <= kSimdNarrowStates ? " (past 32 states AVX2 takes 4 shuffles and 3 blends per 32 lanes)"
                                  : " (past 64 states lanes need AVX-512 VBMI vpermi2b)";
  return why;
}

// The most states for which enumerating every state stays cheap on this CPU (auto's
// probes, fsm/auto/probe.hpp): 64, or 256 where AVX-512 VBMI runs them in vectors.
inline uint32_t simd_cheap_enum_states() {
  return best_cpu_path() == SimdPath::avx512vbmi ? kSimdLanes : kSimdNarrowStates;
}

// The tags of internal state s as a key.
inline std::vector<uint32_t> tag_key(const Tables& t, uint32_t s) {
  return std::vector<uint32_t>(t.tag_list + t.tag_begin[s], t.tag_list + t.tag_begin[s + 1]);
}

// Of the kernels a pattern set's library compiled (one per distinct fit of its DFAs), the
// first that runs plans of `t`; else the first, whose plans then say why not
// (simd_kernels_why_not).
inline const SimdKernels* simd_kernels_for(const Tables& t,
                                           const std::vector<const SimdKernels*>& kernels) {
  if (kernels.empty()) return nullptr;
  if (t.states > kSimdLanes) return kernels.front();  // no plan takes it
  std::set<std::vector<uint32_t>> groups;  // as make_simd_plan forms them
  for (uint32_t s = t.report_floor; s < t.states; ++s) groups.insert(tag_key(t, s));
  for (const SimdKernels* fit : kernels)
    if (simd_kernels_why_not(fit, t.states, uint32_t(groups.size())).empty()) return fit;
  return kernels.front();
}

// The path of the machine (states, CPU, PARAFUSE_FSM_SIMD) and its renumbered table.
// `step(offset, byte)` is the machine's transition on pre-multiplied offsets.
template <class Step>
SimdPlan make_simd_plan(const Tables& t, const std::string& option, Step step) {
  SimdPlan plan;
  const SimdRequest request = simd_request(option);
  const int stride = simd_stride_request();  // a bad value is an error for every plan
  const uint32_t n = t.states;
  if (request.forced && request.path == SimdPath::none) {
    plan.why_not = "SIMD path none was asked for: scalar enumeration";
    return plan;
  }
  if (n > kSimdLanes) {
    plan.why_not = "SIMD enumeration takes at most 256 states (one byte per lane)";
    return plan;
  }
  if (request.forced) {
    const uint32_t most = simd_path_most_states(request.path);
    if (n > most) {
      plan.why_not = std::string("SIMD path ") + simd_path_name(request.path) + " takes at most " +
                     std::to_string(most) + " states";
      return plan;
    }
    plan.path = request.path;
  } else {
    plan.path = simd_auto_path(n, best_cpu_path(), cpu_supports(SimdPath::avx512vl));
    if (plan.path == SimdPath::none) {
      plan.why_not = simd_auto_why_not(n, best_cpu_path());
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
  const std::string unfit = simd_kernels_why_not(t.simd_kernels, n, plan.groups);
  if (!unfit.empty()) {
    SimdPlan none;
    none.why_not = unfit;
    return none;
  }
  plan.kernels = t.simd_kernels;
  for (uint32_t p = 0; p < n; ++p) plan.to_plan[plan.from_plan[p]] = uint8_t(p);
  plan.row_bytes = n <= kSimdNarrowStates ? kSimdRowBytes : n <= 128 ? 128 : 256;
  plan.storage.assign(256 * plan.row_bytes + 64, 0);
  uint8_t* next = plan.storage.data() + (64 - reinterpret_cast<uintptr_t>(plan.storage.data()) % 64);
  for (uint32_t b = 0; b < 256; ++b)
    for (uint32_t p = 0; p < n; ++p)
      next[b * plan.row_bytes + p] =
          plan.to_plan[step(plan.from_plan[p] << t.shift, uint8_t(b)) >> t.shift];
  plan.next = next;
  if (plan.path == SimdPath::avx2 && n <= 16)
    plan.byte_pairs = make_simd_byte_pairs(next, plan.row_bytes, n, plan.lo[0], plan.groups,
                                           stride, &plan.one_byte_why);
  return plan;
}

// Runs `count` chunks (up to 4): `step` (4, 2 or 1) at a time in lockstep over their
// common length, the rest one at a time, then each one's bytes past the common length
// alone. `run(K, lanes, begin, end)` runs K chunks (K a std::integral_constant).
template <class Run>
void simd_in_lockstep(SimdLane* lanes, int count, int step, Run&& run) {
  size_t common = lanes[0].length;
  for (int k = 1; k < count; ++k) common = std::min(common, lanes[k].length);
  int k = 0;
  for (; step == 4 && k + 4 <= count; k += 4) run(std::integral_constant<int, 4>(), lanes + k, 0, common);
  for (; step >= 2 && k + 2 <= count; k += 2) run(std::integral_constant<int, 2>(), lanes + k, 0, common);
  for (; k < count; ++k) run(std::integral_constant<int, 1>(), lanes + k, 0, common);
  for (k = 0; k < count; ++k)
    if (lanes[k].length > common)
      run(std::integral_constant<int, 1>(), lanes + k, common, lanes[k].length);
}

// The portable path: every lane in plain C++, counting as the vector paths do.
template <int G>
void simd_run_scalar(const SimdPlan& p, SimdLane& lane, size_t begin, size_t end) {
  uint8_t v[kSimdLanes];
  std::memcpy(v, lane.state, kSimdLanes);
  const uint32_t n = p.states;
  for (size_t i = begin; i < end; ++i) {
    const uint8_t* row = p.next + size_t(lane.data[i]) * p.row_bytes;
    for (uint32_t s = 0; s < n; ++s) v[s] = row[v[s]];
    for (int g = 0; g < G; ++g)
      for (uint32_t s = 0; s < n; ++s) lane.ge[g * kSimdLanes + s] += v[s] >= p.lo[g];
  }
  std::memcpy(lane.state, v, kSimdLanes);
}

}  // namespace v1
}  // namespace parafuse::fsm
