// parafuse boostfsm: the test drivers' SCHEME:THREADS:CHUNKS configurations (SCHEME may be
// SCHEME/SIMD-PATH, which sets RunOptions::simd).
#pragma once

#include <stdexcept>
#include <string>

#include "fsm/core/run_result.hpp"

namespace parafuse::fsm {
inline namespace v1 {

inline RunOptions parse_driver_config(const std::string& text, bool matches) {
  const size_t first = text.find(':'), second = text.find(':', first + 1);
  if (first == std::string::npos || second == std::string::npos)
    throw std::runtime_error("configuration '" + text + "' is not SCHEME:THREADS:CHUNKS");
  RunOptions options;
  options.scheme = text.substr(0, first);
  if (const size_t slash = options.scheme.find('/'); slash != std::string::npos)
    options.simd = options.scheme.substr(slash + 1), options.scheme.resize(slash);
  options.threads = std::stoi(text.substr(first + 1, second - first - 1));
  options.chunks = std::stoull(text.substr(second + 1));
  options.matches = matches;
  return options;
}

}  // namespace v1
}  // namespace parafuse::fsm
