// The two streams of a CUDA schedule (compute and communication) and their events.
#pragma once
#include "ccn/namespace.hpp"
#include <cuda_runtime.h>

#include "ccn/cuda/check.cuh"

namespace parafuse::ccn {

// The compute and communication streams of a schedule, ordered by events. The
// communication streams have the device's greatest priority, so that NCCL's kernels are
// not starved by large compute grids queued before them. The second one (`comm2`) runs
// the consumer of an overlap of two collectives on different communicators, so that the
// two overlap.
struct Streams {
  cudaStream_t compute = nullptr, comm = nullptr, comm2 = nullptr;
  cudaEvent_t computed = nullptr, communicated = nullptr, communicated2 = nullptr;
  Streams() {
    int least = 0, greatest = 0;
    PF_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    PF_CUDA(cudaStreamCreateWithPriority(&compute, cudaStreamNonBlocking, least));
    PF_CUDA(cudaStreamCreateWithPriority(&comm, cudaStreamNonBlocking, greatest));
    PF_CUDA(cudaStreamCreateWithPriority(&comm2, cudaStreamNonBlocking, greatest));
    PF_CUDA(cudaEventCreateWithFlags(&computed, cudaEventDisableTiming));
    PF_CUDA(cudaEventCreateWithFlags(&communicated, cudaEventDisableTiming));
    PF_CUDA(cudaEventCreateWithFlags(&communicated2, cudaEventDisableTiming));
  }
  ~Streams() {
    cudaEventDestroy(computed);
    cudaEventDestroy(communicated);
    cudaEventDestroy(communicated2);
    cudaStreamDestroy(compute);
    cudaStreamDestroy(comm);
    cudaStreamDestroy(comm2);
  }
  // The second communication stream waits for what the compute stream queued so far.
  void to_comm2() {
    PF_CUDA(cudaEventRecord(computed, compute));
    PF_CUDA(cudaStreamWaitEvent(comm2, computed, 0));
  }
  // The compute stream waits for what the second communication stream queued so far.
  void comm2_to_compute() {
    PF_CUDA(cudaEventRecord(communicated2, comm2));
    PF_CUDA(cudaStreamWaitEvent(compute, communicated2, 0));
  }
  // The communication stream waits for what the compute stream queued so far.
  void to_comm() {
    PF_CUDA(cudaEventRecord(computed, compute));
    PF_CUDA(cudaStreamWaitEvent(comm, computed, 0));
  }
  // The compute stream waits for what the communication stream queued so far.
  void to_compute() {
    PF_CUDA(cudaEventRecord(communicated, comm));
    PF_CUDA(cudaStreamWaitEvent(compute, communicated, 0));
  }
};

}  // namespace parafuse::ccn
