// The CPU backend's pipelines: chunk plans (ccn/chunk_plan.hpp) and the progress of
// MPI's nonblocking collectives, whose requests (and the counts and displacements they
// use) are kept alive until they complete.
#pragma once
#include "ccn/namespace.hpp"
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <vector>

#include "ccn/chunk_plan.hpp"
#include "ccn/mpi_util.hpp"

namespace parafuse::ccn {

// Let Open MPI progress outstanding nonblocking collectives (it only does so in calls).
inline void progress(std::vector<MPI_Request>& requests) {
  if (requests.empty()) return;
  int done = 0;
  PF_MPI(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done,
                     MPI_STATUSES_IGNORE));
}

inline void wait_all(std::vector<MPI_Request>& requests) {
  if (requests.empty()) return;
  PF_MPI(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
  requests.clear();
}

// The chunk count of an `overlap` that `tune` left open, chosen by measurement: its
// first steps run each candidate in turn (kTrials times each, 1 chunk, i.e. no
// pipelining, among them); then the ranks agree on the slowest rank's best time of each
// candidate and keep the fastest for good, where a count beats a smaller one only by
// more than kMargin (a few steps' noise would otherwise decide between counts that cost
// the same). So pipelining is kept only where it pays: where the collective is too small
// to hide, one chunk wins. Every rank calls chunks() and done() around the overlap in
// every step, so they decide at the same call. (Without kMargin, on a loaded machine,
// 4 chunks win as often as 1 where they cost the same.)
class OverlapChunks {
 public:
  static constexpr int kTrials = 2;
  static constexpr double kMargin = 0.05;
  explicit OverlapChunks(std::vector<int> candidates = {1, 2, 4})
      : candidates_(std::move(candidates)),
        best_(candidates_.size(), std::numeric_limits<double>::infinity()) {}

  int chunks() {
    start_ = std::chrono::steady_clock::now();
    return chosen_ > 0 ? chosen_ : candidates_[calls_ % candidates_.size()];
  }

  void done(MPI_Comm comm) {
    if (chosen_ > 0) return;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    size_t i = calls_ % candidates_.size();
    best_[i] = std::min(best_[i], seconds);
    if (++calls_ < kTrials * candidates_.size()) return;
    PF_MPI(MPI_Allreduce(MPI_IN_PLACE, best_.data(), static_cast<int>(best_.size()),
                         MPI_DOUBLE, MPI_MAX, comm));
    size_t pick = 0;  // candidates_ are in increasing order
    for (size_t c = 1; c < best_.size(); ++c) {
      if (best_[c] < best_[pick] * (1.0 - kMargin)) pick = c;
    }
    chosen_ = candidates_[pick];
  }

  int chosen() const { return chosen_; }  // 0 while still measuring

 private:
  std::vector<int> candidates_;
  std::vector<double> best_;
  size_t calls_ = 0;
  int chosen_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace parafuse::ccn
