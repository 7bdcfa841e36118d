// parafuse boostfsm runtime: the options and result of one run of a token set, on the CPU
// (fsm/tokens/schemes.hpp) or a GPU (fsm/cuda/token_run.cuh).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace parafuse::fsm {
inline namespace v1 {

struct TokenRunOptions {
  std::string scheme = "auto";
  int threads = 0;
  size_t chunks = 0;
  // The tokens that start in [from, stop) of the tokenization that starts at `from`; they
  // may read on to the input's end (a rank's range under MPI: fsm/mpi/tokens.hpp).
  size_t from = 0, stop = ~size_t(0);
};

struct TokenRunResult {
  std::vector<uint64_t> counts;  // per kind
  std::string scheme, reason;
  int threads = 1;
  size_t exit = 0;  // where the last token ended (`from` when none started)
};

}  // namespace v1
}  // namespace parafuse::fsm
