// The part of the CUDA runtime API that generated .ccn projects call, on the emulated
// device of pf_emulated_device.hpp (`--backend cuda-emulated` and the tests: the CUDA
// backend's code compiled as C++).
// Copies from device to pageable host memory wait for their stream, as CUDA's do; copies
// from pageable host memory take the host data when called (staged) and reach device memory
// late: when something orders them after (the copy's stream, an event of it), as the CUDA
// documentation allows, so that a copy on the legacy stream that a kernel on a
// non-blocking stream reads reads stale memory.
#pragma once
#include "ccn/namespace.hpp"
#include <cmath>
#include <cstddef>
#include <cstring>

#include "ccn/cuda_emulated/pf_emulated_kernels.hpp"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __syncthreads() pf_emu::syncthreads()

// The runtime's kernel launches (PF_LAUNCH of ccn/cuda/launch.cuh) on this device.
#define PF_LAUNCH(kernel, grid, stream, ...) \
  pf_emu::launch(grid, pf::kThreads, stream, [=] { kernel(__VA_ARGS__); })

using std::isnan;

typedef int cudaError_t;
constexpr cudaError_t cudaSuccess = 0;
constexpr cudaError_t cudaErrorInvalidValue = 1;
constexpr cudaError_t cudaErrorMemoryAllocation = 2;
constexpr cudaError_t cudaErrorInvalidConfiguration = 9;

using cudaStream_t = pf_emu::Stream*;
using cudaEvent_t = pf_emu::Event*;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};
constexpr unsigned cudaStreamNonBlocking = 1;
constexpr unsigned cudaEventDisableTiming = 2;

inline const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    default: return "unknown error";
  }
}

inline cudaError_t cudaGetLastError() {
  cudaError_t error = pf_emu::last_error();
  pf_emu::last_error() = cudaSuccess;
  return error;
}

inline cudaError_t cudaGetDeviceCount(int* count) {
  *count = pf_emu::device_count();
  return cudaSuccess;
}
inline cudaError_t cudaSetDevice(int device) {
  if (device < 0 || device >= pf_emu::device_count()) return cudaErrorInvalidValue;
  pf_emu::current_device() = device;
  return cudaSuccess;
}
inline cudaError_t cudaGetDevice(int* device) {
  *device = pf_emu::current_device();
  return cudaSuccess;
}

// The attributes runtimes size their work by: the emulated device reports 2 SMs of 1,024
// threads (a small GPU), whatever the host.
enum cudaDeviceAttr {
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrMaxThreadsPerMultiProcessor = 39
};
inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attribute, int device) {
  if (device < 0 || device >= pf_emu::device_count()) return cudaErrorInvalidValue;
  *value = attribute == cudaDevAttrMultiProcessorCount ? 2 : 1024;
  return cudaSuccess;
}

// ---- memory ------------------------------------------------------------------------
// The default pool of cudaMallocAsync: its attributes change nothing here.
struct CUmemPoolHandle_st {};
using cudaMemPool_t = CUmemPoolHandle_st*;
enum cudaMemPoolAttr { cudaMemPoolAttrReleaseThreshold = 4 };
inline cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  static CUmemPoolHandle_st only;
  *pool = &only;
  return device >= 0 && device < pf_emu::device_count() ? cudaSuccess : cudaErrorInvalidValue;
}
inline cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr, void* value) {
  return pool && value ? cudaSuccess : cudaErrorInvalidValue;
}

template <typename T> cudaError_t cudaMalloc(T** p, size_t bytes) {
  *p = static_cast<T*>(pf_emu::allocate(bytes));
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
inline cudaError_t cudaFree(void* p) {
  if (!p) return cudaSuccess;
  ++pf_emu::counts_now.allocations;
  ++pf_emu::counts_now.calls;
  ++pf_emu::counts_now.syncs;
  pf_emu::drain_all();  // cudaFree waits for the device
  pf_emu::release(p);
  return cudaSuccess;
}
template <typename T> cudaError_t cudaMallocAsync(T** p, size_t bytes, cudaStream_t) {
  return cudaMalloc(p, bytes);
}
inline cudaError_t cudaFreeAsync(void* p, cudaStream_t stream) {
  if (!pf_emu::is_device(p)) return cudaErrorInvalidValue;
  ++pf_emu::counts_now.allocations;
  pf_emu::enqueue(stream, [p] { pf_emu::release(p); });
  return cudaSuccess;
}

namespace parafuse::ccn::emulated {
// Check a copy's pointers against its kind (cudaMemcpyDefault: decided by the pointers).
inline cudaMemcpyKind copy_kind(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  bool dst_device = is_device(dst, bytes), src_device = is_device(src, bytes);
  if (kind == cudaMemcpyDefault) {
    return static_cast<cudaMemcpyKind>((src_device ? 2 : 0) + (dst_device ? 1 : 0));
  }
  bool want_src = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  bool want_dst = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  if (want_src && !src_device) fail("cudaMemcpy: the source is not device memory");
  if (want_dst && !dst_device) fail("cudaMemcpy: the destination is not device memory");
  if (!want_src && src_device) fail("cudaMemcpy: the source is device memory, not host");
  if (!want_dst && dst_device) fail("cudaMemcpy: the destination is device memory, not host");
  return kind;
}

inline void copy_on(cudaStream_t stream, void* dst, const void* src, size_t bytes,
                    cudaMemcpyKind kind) {
  if (bytes == 0) return;
  kind = copy_kind(dst, src, bytes, kind);
  if (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyHostToHost) {
    auto taken = std::make_shared<std::vector<char>>(static_cast<const char*>(src),
                                                     static_cast<const char*>(src) + bytes);
    enqueue(stream, [dst, taken] { std::memcpy(dst, taken->data(), taken->size()); }, {},
            nullptr, /*late=*/kind == cudaMemcpyHostToDevice);
  } else {
    enqueue(stream, [dst, src, bytes] { std::memmove(dst, src, bytes); });
  }
  if (kind == cudaMemcpyDeviceToHost) {  // pageable host memory: returns when copied
    ++counts_now.syncs;
    Stream* s = resolve(stream);
    drain(s, s->queued);
  }
}
}  // namespace parafuse::ccn::emulated

inline cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes,
                                   cudaMemcpyKind kind, cudaStream_t stream) {
  pf_emu::copy_on(stream, dst, src, bytes, kind);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  pf_emu::copy_on(nullptr, dst, src, bytes, kind);
  return cudaSuccess;
}

inline cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                                     size_t width, size_t height, cudaMemcpyKind kind,
                                     cudaStream_t stream) {
  if (width > dpitch || width > spitch) return cudaErrorInvalidValue;
  if (height == 0 || width == 0) return cudaSuccess;
  size_t dst_span = dpitch * (height - 1) + width, src_span = spitch * (height - 1) + width;
  if (kind != cudaMemcpyDeviceToDevice) pf_emu::fail("cudaMemcpy2DAsync: only device to device");
  pf_emu::require_device(dst, dst_span, "cudaMemcpy2DAsync destination");
  pf_emu::require_device(src, src_span, "cudaMemcpy2DAsync source");
  pf_emu::enqueue(stream, [=] {
    for (size_t row = 0; row < height; ++row) {
      std::memmove(static_cast<char*>(dst) + row * dpitch,
                   static_cast<const char*>(src) + row * spitch, width);
    }
  });
  return cudaSuccess;
}

inline cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return cudaSuccess;
  pf_emu::require_device(p, bytes, "cudaMemset");
  pf_emu::enqueue(stream, [=] { std::memset(p, value, bytes); });
  return cudaSuccess;
}
inline cudaError_t cudaMemset(void* p, int value, size_t bytes) {
  return cudaMemsetAsync(p, value, bytes, nullptr);
}

// ---- streams and events ------------------------------------------------------------
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned) {
  *stream = pf_emu::create_stream();
  return cudaSuccess;
}
// Priorities say which streams PF_EMU_LAZY runs late (compute: the least, 0; communication:
// greater); the range is CUDA's.
inline cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
  *least = 0;
  *greatest = -5;
  return cudaSuccess;
}
inline cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned flags,
                                                int priority) {
  if (priority > 0 || priority < -5) return cudaErrorInvalidValue;
  (void)flags;
  *stream = pf_emu::create_stream(priority);
  return cudaSuccess;
}
inline cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  pf_emu::drain(stream, stream->queued);  // the stream's work still runs, as on a GPU
  return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  ++pf_emu::counts_now.syncs;
  ++pf_emu::counts_now.calls;
  pf_emu::Stream* s = pf_emu::resolve(stream);
  pf_emu::drain(s, s->queued);
  return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() {
  ++pf_emu::counts_now.syncs;
  ++pf_emu::counts_now.calls;
  pf_emu::drain_all();
  return cudaSuccess;
}
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned) {
  *event = new pf_emu::Event;
  return cudaSuccess;
}
inline cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete event;
  return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  ++pf_emu::counts_now.calls;
  pf_emu::Stream* s = pf_emu::resolve(stream);
  event->stream = s;
  event->position = s->queued;
  return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  ++pf_emu::counts_now.syncs;
  ++pf_emu::counts_now.calls;
  if (event->stream) pf_emu::drain(event->stream, event->position);
  return cudaSuccess;
}
inline cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned) {
  std::vector<pf_emu::Dep> deps;
  if (event->stream) deps.push_back({event->stream, event->position});
  pf_emu::enqueue(stream, [] {}, std::move(deps));
  return cudaSuccess;
}

// ---- atomics: one fiber runs at a time and switches only at __syncthreads ---------------
inline unsigned int atomicCAS(unsigned int* address, unsigned int compare, unsigned int value) {
  unsigned int old = *address;
  if (old == compare) *address = value;
  return old;
}
inline unsigned long long atomicCAS(unsigned long long* address, unsigned long long compare,
                                    unsigned long long value) {
  unsigned long long old = *address;
  if (old == compare) *address = value;
  return old;
}
