/* An MPI profiling-interface shim (LD_PRELOAD) that counts the calls by which the fused
   collectives of the CPU backend reveal their transport: a node-shared window, or MPI's
   reduce-scatter and all-gather. At MPI_Finalize each rank writes its counts to
   $PF_TRANSPORT_TRACE/rank.PID. Test-only: tests/e2e/test_cpu_transport.py. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long shared_windows, reduce_scatters, all_gathers;

int MPI_Win_allocate_shared(MPI_Aint size, int unit, MPI_Info info, MPI_Comm comm,
                            void* base, MPI_Win* win) {
  ++shared_windows;
  return PMPI_Win_allocate_shared(size, unit, info, comm, base, win);
}

int MPI_Reduce_scatter(const void* in, void* out, const int counts[], MPI_Datatype type,
                       MPI_Op op, MPI_Comm comm) {
  ++reduce_scatters;
  return PMPI_Reduce_scatter(in, out, counts, type, op, comm);
}

int MPI_Ireduce_scatter(const void* in, void* out, const int counts[], MPI_Datatype type,
                        MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  ++reduce_scatters;
  return PMPI_Ireduce_scatter(in, out, counts, type, op, comm, request);
}

int MPI_Allgatherv(const void* in, int count, MPI_Datatype type, void* out,
                   const int counts[], const int displs[], MPI_Datatype out_type,
                   MPI_Comm comm) {
  ++all_gathers;
  return PMPI_Allgatherv(in, count, type, out, counts, displs, out_type, comm);
}

int MPI_Iallgatherv(const void* in, int count, MPI_Datatype type, void* out,
                    const int counts[], const int displs[], MPI_Datatype out_type,
                    MPI_Comm comm, MPI_Request* request) {
  ++all_gathers;
  return PMPI_Iallgatherv(in, count, type, out, counts, displs, out_type, comm, request);
}

int MPI_Finalize(void) {
  const char* folder = getenv("PF_TRANSPORT_TRACE");
  if (folder) {
    char path[4096];
    snprintf(path, sizeof path, "%s/rank.%ld", folder, (long)getpid());
    FILE* out = fopen(path, "w");
    if (out) {
      fprintf(out, "%ld %ld %ld\n", shared_windows, reduce_scatters, all_gathers);
      fclose(out);
    }
  }
  return PMPI_Finalize();
}
