// parafuse boostfsm runtime: the bounds of a run's shape, one place for the library calls
// of machines, pattern sets and token sets and for the runners' options.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

#include "fsm/core/shared_constants.hpp"

namespace parafuse::fsm {
inline namespace v1 {

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
