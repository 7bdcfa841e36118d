// parafuse boostfsm runtime: a run's scheme and the bounds of its shape, one place for the
// library calls of machines, pattern sets and token sets and for the runners' options.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

#include "fsm/core/shared_constants.hpp"

namespace parafuse::fsm {
inline namespace v1 {

// Whether `name` names a scheme (a run's --scheme, RunOptions::scheme); if so, which.
inline bool known_scheme(const std::string& name, Scheme* scheme = nullptr) {
  for (int i = 0; i < int(sizeof kSchemes / sizeof kSchemes[0]); ++i)
    if (name == kSchemes[i]) {
      if (scheme) *scheme = Scheme(i);
      return true;
    }
  return false;
}

// The scheme `name` names; throws std::invalid_argument naming the schemes for any other.
inline Scheme scheme_named(const std::string& name) {
  Scheme scheme = Scheme::automatic;
  if (!known_scheme(name, &scheme))
    throw std::invalid_argument("unknown scheme '" + name + "' (schemes are " + kSchemeList + ")");
  return scheme;
}

// Throws std::invalid_argument for a thread count outside [0, kMostThreads].
inline void check_threads(int threads) {
  if (threads < 0 || threads > kMostThreads)
    throw std::invalid_argument("threads must be from 0 to " + std::to_string(kMostThreads) +
                                " (0: OpenMP's default), not " + std::to_string(threads));
}

// Throws std::invalid_argument for a chunk count past kMaxChunks (0 picks one).
inline void check_chunks(size_t chunks) {
  if (chunks > kMaxChunks)
    throw std::invalid_argument("at most " + std::to_string(kMaxChunks) + " chunks, not " +
                                std::to_string(chunks));
}

}  // namespace v1
}  // namespace parafuse::fsm
