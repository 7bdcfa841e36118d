// Open MPI's components for a job whose ranks share one node: shared-memory one-sided
// windows (osc sm), the ob1 point-to-point layer over the shared-memory and self
// transports. Without this choice Open MPI probes UCX, whose one-sided component prints
// "OSC UCX component priority set inside component query failed" to every run that
// opens a window. Set before MPI_Init, as environment defaults: by the runner, and by the
// CPU library when it is loaded (before an application's main, or at the import of its
// Python module). A value the user set (OMPI_MCA_osc=... or mpirun --mca) wins, and jobs
// spread over several nodes keep Open MPI's own choice.
#pragma once
#include "ccn/namespace.hpp"
#include <cstdlib>
#include <cstring>

namespace parafuse::ccn {

// Known from mpirun's environment (as many ranks on this node as in the job), or a
// singleton (no launcher at all); another launcher (srun, a PMIx server) leaves it unknown.
inline bool ranks_share_one_node() {
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const char* world = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (local != nullptr && world != nullptr) return std::strcmp(local, world) == 0;
  return world == nullptr && std::getenv("PMIX_RANK") == nullptr &&
         std::getenv("SLURM_PROCID") == nullptr;
}

inline void select_one_node_mpi_components() {
  if (!ranks_share_one_node()) return;
  setenv("OMPI_MCA_osc", "sm", 0);
  setenv("OMPI_MCA_pml", "ob1", 0);
  setenv("OMPI_MCA_btl", "self,sm", 0);
}

}  // namespace parafuse::ccn
