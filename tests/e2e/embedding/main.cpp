// A C++ application that embeds the library generated from samples/adam.ccn:
// every rank holds gradient 1 and weight 0.5; after one step it prints w[0].
#include <mpi.h>

#include <cstdio>

#include "adam.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    adam::Sizes sizes;
    sizes.N = 1000;
    adam::Program program(MPI_COMM_WORLD, sizes, "fused");
    for (pf::Slot slot : program.inputs()) {
      for (int64_t i = 0; i < slot.local.count; ++i) {
        if (slot.name == "g") static_cast<pf::f16*>(slot.data)[i] = pf::f16(1.0f);
        if (slot.name == "w") static_cast<float*>(slot.data)[i] = 0.5f;
        if (slot.name == "m" || slot.name == "v") static_cast<float*>(slot.data)[i] = 0.0f;
      }
    }
    program.step();
    pf::Slot w = program.tensor("w");
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) std::printf("w[0] = %.9g\n", static_cast<float*>(w.data)[0]);
  }
  MPI_Finalize();
  return 0;
}
