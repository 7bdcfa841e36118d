// Every CUDA call checked: the failing call and its source line are reported, with the
// line of generated code that ran (PF_HERE() at each stage), then every rank aborts.
#pragma once
#include "ccn/namespace.hpp"
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#define PF_CUDA(call)                                                                \
  do {                                                                               \
    cudaError_t pf_status_ = (call);                                                 \
    if (pf_status_ != cudaSuccess) {                                                 \
      pf::device_failed(#call, __FILE__, __LINE__, cudaGetErrorString(pf_status_));  \
    }                                                                                \
  } while (0)

#define PF_HERE() (pf::generated_line() = pf::SourceLine{__FILE__, __LINE__})

namespace parafuse::ccn {

// The line of generated code that runs now (PF_HERE() at each stage), so that a failing
// call inside a runtime helper names the generated line that called it.
struct SourceLine {
  const char* file = nullptr;
  int line = 0;
};
inline SourceLine& generated_line() {
  static thread_local SourceLine where;
  return where;
}

[[noreturn]] inline void device_failed(const char* call, const char* file, int line,
                                       const char* why) {
  std::fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, call, why);
  if (generated_line().file && std::string(generated_line().file) != file) {
    std::fprintf(stderr, "%s:%d: called from here (work queued earlier on a stream may be "
                 "what failed)\n", generated_line().file, generated_line().line);
  }
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::abort();
}

}  // namespace parafuse::ccn
