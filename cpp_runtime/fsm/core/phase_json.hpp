// parafuse boostfsm runtime: phase timings (fsm/core/engine.hpp) as the JSON array the drivers
// print with --profile (bench/fsm_schemes.py projects many-core times from them), and a
// pattern set's result line.
#pragma once

#include <string>
#include <vector>

#include "fsm/core/run_result.hpp"
#include "fsm/core/json_output.hpp"

namespace parafuse::fsm {
inline namespace v1 {

inline std::string phases_json(const std::vector<PhaseTiming>& phases) {
  std::string out = ", \"phases\": [";
  for (size_t i = 0; i < phases.size(); ++i) {
    out += i ? ", {\"name\": " : "{\"name\": ";
    append_json_string(out, phases[i].name);
    out += std::string(", \"parallel\": ") + (phases[i].parallel ? "true" : "false");
    out += ", \"seconds\": " + format_number(phases[i].seconds) + ", \"units\": [";
    for (size_t u = 0; u < phases[i].units.size(); ++u)
      out += (u ? ", " : "") + format_number(phases[i].units[u]);
    out += "]}";
  }
  return out + "]";
}

// A pattern set's result as the engine-set drivers print it (one JSON line): scheme,
// reason, threads, final_state (per engine, null for an engine without numbered states),
// counts, with `matches` the matches, the phases where profiled, and the run's `seconds`.
inline std::string set_result_line(const SetResult& result, bool matches, double seconds) {
  std::string out = "{\"scheme\": ";
  append_json_string(out, result.scheme);
  out += ", \"reason\": ";
  append_json_string(out, result.reason);
  out += ", \"threads\": " + std::to_string(result.threads) + ", \"final_state\": [";
  for (size_t i = 0; i < result.final_states.size(); ++i)
    out += (i ? ", " : "") + (result.final_states[i] < 0 ? std::string("null")
                                                         : std::to_string(result.final_states[i]));
  out += "]";
  append_counts_and_matches(out, result.counts, matches ? &result.matches : nullptr);
  if (!result.phases.empty()) out += phases_json(result.phases);
  return out + ", \"seconds\": " + format_number(seconds) + "}\n";
}

}  // namespace v1
}  // namespace parafuse::fsm
