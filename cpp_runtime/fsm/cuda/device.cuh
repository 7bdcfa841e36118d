// parafuse boostfsm on GPUs: the few device facilities the FSM kernels need, on a real
// GPU (nvcc) or on the emulated device of cpp_runtime/ccn/cuda_emulated (PF_CUDA_EMULATION,
// compiled as C++): checked calls, kernel launches, device buffers, atomics.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

// Launch __global__ `kernel` on `grid` blocks of `threads` on `stream`.
#ifdef PF_CUDA_EMULATION
#define PF_FSM_LAUNCH(kernel, grid, threads, stream, ...) \
  ::parafuse::fsm::cuda::emulated_launch(grid, threads, stream, kernel, __VA_ARGS__)
#else
#define PF_FSM_LAUNCH(kernel, grid, threads, stream, ...) \
  kernel<<<grid, threads, 0, stream>>>(__VA_ARGS__)
#endif

#define PF_FSM_CUDA(call) ::parafuse::fsm::cuda::check((call), #call)

namespace parafuse::fsm::cuda {

constexpr int kBlockThreads = 128;

#ifdef PF_CUDA_EMULATION
// The arguments are evaluated here, as a launch evaluates them, and the kernel runs later.
template <class Kernel, class... Args>
void emulated_launch(unsigned grid, unsigned threads, cudaStream_t stream, Kernel kernel,
                     Args... args) {
  pf_emu::launch(grid, threads, stream, [=] { kernel(args...); });
}
#endif

inline void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("CUDA call failed: ") + call + ": " +
                             cudaGetErrorString(status));
}

inline unsigned blocks_for(size_t threads) {
  return unsigned((threads + kBlockThreads - 1) / kBlockThreads);
}

// Device memory of `count` T, freed with the object. Copies and fills are queued on the
// run's stream; a download waits for it.
template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(size_t count = 0) : count_(count) {
    if (count) PF_FSM_CUDA(cudaMalloc(&data_, count * sizeof(T)));
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& other) noexcept : data_(other.data_), count_(other.count_) {
    other.data_ = nullptr, other.count_ = 0;
  }
  DeviceArray& operator=(DeviceArray&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    return *this;
  }
  ~DeviceArray() {
    if (data_) cudaFree(data_);
  }
  void upload(const T* host, size_t count, cudaStream_t stream) {
    if (count)
      PF_FSM_CUDA(cudaMemcpyAsync(data_, host, count * sizeof(T), cudaMemcpyHostToDevice, stream));
  }
  std::vector<T> download(size_t count, cudaStream_t stream) const {
    std::vector<T> host(count);
    if (count)
      PF_FSM_CUDA(cudaMemcpyAsync(host.data(), data_, count * sizeof(T), cudaMemcpyDeviceToHost,
                                  stream));
    PF_FSM_CUDA(cudaStreamSynchronize(stream));
    return host;
  }
  T at(size_t index, cudaStream_t stream) const {  // one element, once the stream is done
    T value;
    PF_FSM_CUDA(cudaMemcpyAsync(&value, data_ + index, sizeof(T), cudaMemcpyDeviceToHost, stream));
    PF_FSM_CUDA(cudaStreamSynchronize(stream));
    return value;
  }
  void zero(cudaStream_t stream) {
    if (count_) PF_FSM_CUDA(cudaMemsetAsync(data_, 0, count_ * sizeof(T), stream));
  }
  T* get() const { return data_; }

 private:
  T* data_ = nullptr;
  size_t count_ = 0;
};

// A stream of its own for one run.
class RunStream {
 public:
  RunStream() { PF_FSM_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  RunStream(const RunStream&) = delete;
  RunStream& operator=(const RunStream&) = delete;
  ~RunStream() { cudaStreamDestroy(stream_); }
  operator cudaStream_t() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// count += by, from every thread at once.
__device__ inline void add_count(unsigned long long* count, unsigned long long by) {
#ifdef PF_CUDA_EMULATION
  *count += by;  // one emulated thread runs at a time, switching only at __syncthreads
#else
  atomicAdd(count, by);
#endif
}
__device__ inline void add_count(unsigned int* count, unsigned int by) {
#ifdef PF_CUDA_EMULATION
  *count += by;
#else
  atomicAdd(count, by);
#endif
}

// *at = min(*at, value), from every thread at once.
__device__ inline void lower_to(unsigned long long* at, unsigned long long value) {
#ifdef PF_CUDA_EMULATION
  if (value < *at) *at = value;
#else
  atomicMin(at, value);
#endif
}

// An event that orders one stream after another.
class RunEvent {
 public:
  RunEvent() { PF_FSM_CUDA(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }
  RunEvent(const RunEvent&) = delete;
  RunEvent& operator=(const RunEvent&) = delete;
  ~RunEvent() { cudaEventDestroy(event_); }
  operator cudaEvent_t() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace parafuse::fsm::cuda
