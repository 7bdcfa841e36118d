// The CPU backend's pipelines: chunk plans (ccn/chunk_plan.hpp) and the progress of
// MPI's nonblocking collectives, whose requests (and the counts and displacements they
// use) are kept alive until they complete.
#pragma once
#include <mpi.h>

#include <vector>

#include "ccn/chunk_plan.hpp"
#include "ccn/mpi_util.hpp"

namespace pf {

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

}  // namespace pf
