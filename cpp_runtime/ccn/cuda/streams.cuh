// The two streams of a CUDA schedule (compute and communication) and their events.
#pragma once
#include <cuda_runtime.h>

#include "ccn/cuda/check.cuh"

namespace pf {

// The compute and communication streams of a schedule, ordered by events.
struct Streams {
  cudaStream_t compute = nullptr, comm = nullptr;
  cudaEvent_t computed = nullptr, communicated = nullptr;
  Streams() {
    PF_CUDA(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
    PF_CUDA(cudaStreamCreateWithFlags(&comm, cudaStreamNonBlocking));
    PF_CUDA(cudaEventCreateWithFlags(&computed, cudaEventDisableTiming));
    PF_CUDA(cudaEventCreateWithFlags(&communicated, cudaEventDisableTiming));
  }
  ~Streams() {
    cudaEventDestroy(computed);
    cudaEventDestroy(communicated);
    cudaStreamDestroy(compute);
    cudaStreamDestroy(comm);
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

}  // namespace pf
