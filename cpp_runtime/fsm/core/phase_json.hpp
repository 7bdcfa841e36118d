// parafuse boostfsm runtime: phase timings (fsm/core/engine.hpp) as the JSON array the drivers
// print with --profile; bench/fsm_schemes.py projects many-core times from them.
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

}  // namespace v1
}  // namespace parafuse::fsm
