// parafuse boostfsm runtime: what a run is asked (RunOptions) and what it gives
// (RunResult), the same on the CPU (fsm/core/engine.hpp) and the GPU (fsm/cuda/run.cuh).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fsm/core/match.hpp"

namespace parafuse::fsm {
inline namespace v1 {

struct RunOptions {
  bool profile = false;  // record phase times (RunResult::phases)
  std::string scheme = "auto";
  int threads = 0;    // 0: OpenMP's default
  size_t chunks = 0;  // 0: kLanes per thread
  bool matches = false;
  std::string simd;  // enum's SIMD path (fsm/simd/cpu_features.hpp); empty: $PARAFUSE_FSM_SIMD or auto
};

// The time of one phase: parallel phases also record each work unit (a group of up
// to kLanes chunks run by one thread), from which scaling to more cores is projected.
struct PhaseTiming {
  std::string name;
  bool parallel = false;
  double seconds = 0;
  std::vector<double> units;
};

struct RunResult {
  std::vector<PhaseTiming> phases;
  uint32_t final_state = 0;  // the machine's state number
  std::vector<uint64_t> counts;
  std::vector<Match> matches;
  std::string scheme, reason;
  int threads = 1;
  size_t chunks = 1;
  uint32_t counting_modes = 0;  // bit `Counting` mode: a block was counted that way (count.hpp)
  int entry_bytes = 0;          // bytes of a transition table entry
};

// A pattern set of several engines (fsm/sets/engine_set.hpp; fsm/cuda/engine_set_run.cuh).
struct SetResult {
  std::vector<PhaseTiming> phases;  // with options.profile: every engine's, named "engine i: ..."
  std::vector<int64_t> final_states;  // per engine; -1: an engine without numbered states
  std::vector<uint64_t> counts;
  std::vector<Match> matches;
  std::string scheme, reason;
  int threads = 1;
};

// Sort matches by (offset, tag) when each is at most a few places from its place, as
// delayed and end-of-data reports leave them: insertion sort, linear in that case.
inline void restore_match_order(std::vector<Match>& matches) {
  const auto before = [](const Match& a, const Match& b) {
    return a.offset < b.offset || (a.offset == b.offset && a.tag < b.tag);
  };
  for (size_t i = 1; i < matches.size(); ++i) {
    if (!before(matches[i], matches[i - 1])) continue;
    const Match moved = matches[i];
    size_t j = i;
    for (; j > 0 && before(moved, matches[j - 1]); --j) matches[j] = matches[j - 1];
    matches[j] = moved;
  }
}

}  // namespace v1
}  // namespace parafuse::fsm
