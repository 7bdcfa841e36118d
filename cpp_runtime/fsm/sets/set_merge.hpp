// parafuse boostfsm runtime: the engines' results of a pattern set gathered into one
// SetResult (fsm/core/run_result.hpp), as the CPU (fsm/sets/engine_set.hpp) and the GPU
// (fsm/cuda/engine_set_run.cuh) give it: counts added per tag, matches merged by offset, then
// tag, one final state per engine, the distinct schemes joined by '+', and a reason per
// engine.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "fsm/core/run_result.hpp"
#include "fsm/sets/engine_directory.hpp"
#include "fsm/sets/nfa_engine.hpp"

namespace parafuse::fsm {
inline namespace v1 {

class SetMerge {
 public:
  SetMerge(SetResult& result, uint32_t tag_count) : result_(result) {
    result_.counts.assign(tag_count, 0);
  }

  // Engine `index`'s result; `final_state` -1: an engine without numbered states.
  void add(size_t index, EngineKind kind, int64_t final_state, const std::vector<uint64_t>& counts,
           const std::vector<Match>& matches, const std::string& scheme,
           const std::string& reason) {
    result_.final_states.push_back(final_state);
    for (size_t tag = 0; tag < result_.counts.size(); ++tag) result_.counts[tag] += counts[tag];
    result_.matches.insert(result_.matches.end(), matches.begin(), matches.end());
    if (std::find(schemes_.begin(), schemes_.end(), scheme) == schemes_.end())
      schemes_.push_back(scheme);
    result_.reason += (index ? "; engine " : "engine ") + std::to_string(index) + " (" +
                      kind_name(kind) + ", " + scheme + "): " + reason;
  }

  void finish() {
    for (size_t i = 0; i < schemes_.size(); ++i) result_.scheme += (i ? "+" : "") + schemes_[i];
    sort_matches(result_.matches);
  }

 private:
  SetResult& result_;
  std::vector<std::string> schemes_;
};

// What an NFA engine's run did: its chunks, or (unbounded) `unbounded`.
inline std::string nfa_reason(const NfaTables& nfa, size_t chunks, const std::string& unbounded) {
  return nfa.bounded() ? "bit-parallel NFA; matches are at most " + std::to_string(nfa.max_length) +
                             " bytes long, so " + std::to_string(chunks) +
                             " chunks start exactly from that much lookback"
                       : "bit-parallel NFA with unbounded matches, " + unbounded;
}

}  // namespace v1
}  // namespace parafuse::fsm
