// Device memory: a schedule's buffers (DeviceBuffer), a step's temporaries (StepArena), and
// copies between host and device.
#pragma once
#include "ccn/namespace.hpp"
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <new>
#include <utility>
#include <vector>

#include "ccn/cuda/check.cuh"

namespace parafuse::ccn {

// Device memory of `count` elements (at least one, so that a pointer always exists), or,
// between borrow() and restore(), the caller's device memory in its place (Program::bind).
// swap() moves the borrowed pointer along with the memory.
template <typename T> class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(int64_t count) { resize(count); }
  ~DeviceBuffer() {
    restore();
    if (data_) cudaFree(data_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  // A schedule sizes its buffers when it is made (Program's constructor): memory the
  // device lacks for them is std::bad_alloc there, which the constructor reports with the
  // sizes, not a failure that aborts the ranks.
  void resize(int64_t count) {
    restore();
    if (data_) PF_CUDA(cudaFree(data_));
    data_ = nullptr;
    count_ = count;
    if (uint64_t(std::max<int64_t>(count, 1)) > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
    const cudaError_t allocated = cudaMalloc(&data_, sizeof(T) * std::max<int64_t>(count, 1));
    if (allocated == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // not an error of the device's later work
      data_ = nullptr;
      throw std::bad_alloc();
    }
    PF_CUDA(allocated);
    PF_CUDA(cudaMemset(data_, 0, sizeof(T) * std::max<int64_t>(count, 1)));
    // cudaMemset runs on the legacy stream, which the schedule's non-blocking streams do
    // not wait for: finish it before any of them may touch the buffer
    PF_CUDA(cudaDeviceSynchronize());
  }
  T* data() const { return data_; }
  int64_t size() const { return count_; }
  void swap(DeviceBuffer& other) {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    std::swap(owned_, other.owned_);
  }
  // Work on `external` (at least size() elements) instead of this buffer's own memory.
  void borrow(T* external) {
    if (!owned_) owned_ = data_;
    data_ = external;
  }
  // Back to this buffer's own memory (its contents are what they were, or stale).
  void restore() {
    if (owned_) data_ = owned_;
    owned_ = nullptr;
  }

 private:
  T* data_ = nullptr;
  T* owned_ = nullptr;  // this buffer's own memory while data_ is borrowed
  int64_t count_ = 0;
};

// Device memory of a step's temporaries. The k-th request of a step gets the k-th buffer,
// allocated (or grown) in the first step and reused by every later one, since each step
// asks for the same sizes in the same order: no allocation in the steady state. A buffer
// is reused only by the next step's same request, which stream order puts after every use
// of it in this step (a step ends with the compute stream waiting for the communication
// stream, and the next one starts there). A request of 0 elements takes no memory.
class StepArena {
 public:
  StepArena() = default;
  ~StepArena() {
    for (Slot& slot : slots_) cudaFree(slot.data);
  }
  StepArena(const StepArena&) = delete;
  StepArena& operator=(const StepArena&) = delete;
  void restart() { next_ = 0; }
  template <typename T> T* take(int64_t count) {
    if (next_ == slots_.size()) slots_.push_back({});
    Slot& slot = slots_[next_++];
    const int64_t bytes = static_cast<int64_t>(sizeof(T)) * count;
    if (bytes == 0) return nullptr;
    if (slot.bytes < bytes) {
      if (slot.data) PF_CUDA(cudaFree(slot.data));  // waits for the device (first step only)
      PF_CUDA(cudaMalloc(&slot.data, bytes));
      slot.bytes = bytes;
    }
    return static_cast<T*>(slot.data);
  }

 private:
  struct Slot {
    void* data = nullptr;
    int64_t bytes = 0;
  };
  std::vector<Slot> slots_;
  size_t next_ = 0;
};

template <typename T> void upload(T* device, const std::vector<T>& host, cudaStream_t stream) {
  if (!host.empty()) {
    PF_CUDA(cudaMemcpyAsync(device, host.data(), sizeof(T) * host.size(),
                            cudaMemcpyHostToDevice, stream));
  }
}

template <typename T> void download(std::vector<T>& host, const T* device, cudaStream_t stream) {
  if (!host.empty()) {
    PF_CUDA(cudaMemcpyAsync(host.data(), device, sizeof(T) * host.size(),
                            cudaMemcpyDeviceToHost, stream));
  }
}

// A device scalar read back to the host (after the work queued on `stream`).
template <typename T> T read_scalar(const T* device, cudaStream_t stream) {
  T value;
  PF_CUDA(cudaMemcpyAsync(&value, device, sizeof(T), cudaMemcpyDeviceToHost, stream));
  PF_CUDA(cudaStreamSynchronize(stream));
  return value;
}

}  // namespace parafuse::ccn
