// CUDA for generated .ccn programs: every CUDA call checked (the failing call and the
// generated source line are reported, then every rank aborts), device-side block
// shapes, device buffers, the grid-stride launcher of element-wise kernels, block
// reductions combined with atomics, and row-wise normalisations.
#pragma once
#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "half.hpp"
#include "program.hpp"

#define PF_CUDA(call)                                                                \
  do {                                                                               \
    cudaError_t pf_status_ = (call);                                                 \
    if (pf_status_ != cudaSuccess) {                                                 \
      pf::device_failed(#call, __FILE__, __LINE__, cudaGetErrorString(pf_status_));  \
    }                                                                                \
  } while (0)

#define PF_HERE() (pf::generated_line() = pf::SourceLine{__FILE__, __LINE__})

// Launch __global__ `kernel` (a name or a pointer, no template commas) on `grid` blocks of
// kThreads. Under PF_CUDA_EMULATION (tests/cuda_emulation/: the CUDA code compiled as C++
// and run on the CPU) the launch is the emulator's.
#if defined(PF_CUDA_EMULATION)
#define PF_LAUNCH(kernel, grid, stream, ...) \
  pf_emu::launch(grid, pf::kThreads, stream, [=] { kernel(__VA_ARGS__); })
#else
#define PF_LAUNCH(kernel, grid, stream, ...) kernel<<<grid, pf::kThreads, 0, stream>>>(__VA_ARGS__)
#endif

namespace pf {

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

// pf::Local with fixed arrays, so that kernels can take it by value.
constexpr int kMaxRank = 8;
struct DevLocal {
  int64_t logical[kMaxRank] = {}, start[kMaxRank] = {}, shape[kMaxRank] = {};
  int64_t count = 1;
  int rank = 0;
};

inline DevLocal device_local(const Local& local) {
  DevLocal out;
  out.rank = static_cast<int>(local.shape.size());
  if (out.rank > kMaxRank) throw std::invalid_argument("tensors of more than 8 dims");
  for (int d = 0; d < out.rank; ++d) {
    out.logical[d] = local.logical[d];
    out.start[d] = local.start[d];
    out.shape[d] = local.shape[d];
  }
  out.count = local.count;
  return out;
}

inline Local host_local(const DevLocal& d) {
  Local out;
  out.logical.assign(d.logical, d.logical + d.rank);
  out.start.assign(d.start, d.start + d.rank);
  out.shape.assign(d.shape, d.shape + d.rank);
  out.count = d.count;
  return out;
}

__host__ __device__ inline int64_t inner_count(const DevLocal& local, int from) {
  int64_t count = 1;
  for (int d = from; d < local.rank; ++d) count *= local.shape[d];
  return count;
}
__host__ __device__ inline int64_t outer_count(const DevLocal& local, int until) {
  int64_t count = 1;
  for (int d = 0; d < until && d < local.rank; ++d) count *= local.shape[d];
  return count;
}

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
  void resize(int64_t count) {
    restore();
    if (data_) PF_CUDA(cudaFree(data_));
    count_ = count;
    PF_CUDA(cudaMalloc(&data_, sizeof(T) * std::max<int64_t>(count, 1)));
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

constexpr int kThreads = 256;

inline int grid_for(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(std::clamp<int64_t>(blocks, 1, 65535));
}

// One generated element-wise kernel: f(i) for i in [lo, hi), grid-stride.
template <typename F> __global__ void for_each_kernel(int64_t lo, int64_t hi, F f) {
  for (int64_t i = lo + blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < hi;
       i += int64_t(gridDim.x) * blockDim.x) {
    f(i);
  }
}

template <typename F> void launch(int64_t lo, int64_t hi, cudaStream_t stream, F f) {
  if (hi <= lo) return;
  PF_LAUNCH(for_each_kernel, grid_for(hi - lo), stream, lo, hi, f);
  PF_CUDA(cudaGetLastError());
}

template <typename T> __global__ void fill_kernel(T* target, int64_t n, T value) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    target[i] = value;
  }
}

template <typename T> void fill(T* target, int64_t n, T value, cudaStream_t stream) {
  if (n <= 0) return;
  PF_LAUNCH(fill_kernel, grid_for(n), stream, target, n, value);
  PF_CUDA(cudaGetLastError());
}

template <typename T> void fill_scalar(T* target, T value, cudaStream_t stream) {
  fill(target, 1, value, stream);
}

// Combine `value` into *target with an atomic compare-and-swap (any 4- or 8-byte type).
template <typename A, typename Op> __device__ void atomic_combine(A* target, A value, Op op) {
  using Word = std::conditional_t<sizeof(A) == 4, unsigned int, unsigned long long>;
  Word* address = reinterpret_cast<Word*>(target);
  Word old = *address, assumed;
  do {
    assumed = old;
    A now;
    memcpy(&now, &assumed, sizeof(A));
    A next = op(now, value);
    Word bits;
    memcpy(&bits, &next, sizeof(A));
    old = atomicCAS(address, assumed, bits);
  } while (assumed != old);
}

struct SumOp {
  template <typename A> __host__ __device__ A operator()(A a, A b) const { return a + b; }
};
struct MaxOp {
  template <typename A> __host__ __device__ A operator()(A a, A b) const {
    if constexpr (std::is_floating_point_v<A>) {
      if (isnan(a) || isnan(b)) return isnan(a) ? a : b;
    }
    return a > b ? a : b;
  }
};

// acc = op over i in [0, n) of f(i): a block reduction per block, then one atomic each.
template <typename A, typename Op, typename F>
__global__ void reduce_kernel(int64_t n, A identity, Op op, F f, A* acc) {
  __shared__ A partial[kThreads];
  A mine = identity;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    mine = op(mine, f(i));
  }
  partial[threadIdx.x] = mine;
  __syncthreads();
  for (int width = kThreads / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) partial[threadIdx.x] = op(partial[threadIdx.x], partial[threadIdx.x + width]);
    __syncthreads();
  }
  if (threadIdx.x == 0) atomic_combine(acc, partial[0], op);
}

template <typename A, typename Op, typename F>
void reduce(int64_t n, A identity, Op op, cudaStream_t stream, A* acc, F f) {
  fill_scalar(acc, identity, stream);
  if (n <= 0) return;
  PF_LAUNCH(reduce_kernel, std::min(grid_for(n), 1024), stream, n, identity, op, f, acc);
  PF_CUDA(cudaGetLastError());
}

// Row-wise layernorm / rmsnorm over the last dim, in place: one block per row.
template <typename W, bool Layer>
__global__ void norm_rows_kernel(W* data, int64_t rows, int64_t cols, W eps) {
  __shared__ W partial[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    W* row = data + r * cols;
    W mean = 0;
    if (Layer) {
      W sum = 0;
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) sum += row[j];
      partial[threadIdx.x] = sum;
      __syncthreads();
      for (int w = kThreads / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) partial[threadIdx.x] += partial[threadIdx.x + w];
        __syncthreads();
      }
      mean = partial[0] / static_cast<W>(cols);
      __syncthreads();
    }
    W squares = 0;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) squares += (row[j] - mean) * (row[j] - mean);
    partial[threadIdx.x] = squares;
    __syncthreads();
    for (int w = kThreads / 2; w > 0; w /= 2) {
      if (threadIdx.x < w) partial[threadIdx.x] += partial[threadIdx.x + w];
      __syncthreads();
    }
    W scale = W(1) / sqrt(partial[0] / static_cast<W>(cols) + eps);
    __syncthreads();
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) row[j] = (row[j] - mean) * scale;
  }
}

template <typename W> void layernorm_rows(W* data, int64_t count, int64_t cols, W eps,
                                          cudaStream_t stream) {
  int64_t rows = cols ? count / cols : 0;
  if (rows == 0) return;
  auto* kernel = &norm_rows_kernel<W, true>;
  PF_LAUNCH(kernel, grid_for(rows), stream, data, rows, cols, eps);
  PF_CUDA(cudaGetLastError());
}

template <typename W> void rmsnorm_rows(W* data, int64_t count, int64_t cols, W eps,
                                        cudaStream_t stream) {
  int64_t rows = cols ? count / cols : 0;
  if (rows == 0) return;
  auto* kernel = &norm_rows_kernel<W, false>;
  PF_LAUNCH(kernel, grid_for(rows), stream, data, rows, cols, eps);
  PF_CUDA(cudaGetLastError());
}

// A device scalar read back to the host (after the work queued on `stream`).
template <typename T> T read_scalar(const T* device, cudaStream_t stream) {
  T value;
  PF_CUDA(cudaMemcpyAsync(&value, device, sizeof(T), cudaMemcpyDeviceToHost, stream));
  PF_CUDA(cudaStreamSynchronize(stream));
  return value;
}

}  // namespace pf

namespace pf {

// Device memory of one step, allocated and freed in stream order (cudaMallocAsync).
template <typename T> class StreamBuffer {
 public:
  StreamBuffer(int64_t count, cudaStream_t stream) : stream_(stream) {
    PF_CUDA(cudaMallocAsync(&data_, sizeof(T) * std::max<int64_t>(count, 1), stream));
  }
  ~StreamBuffer() { cudaFreeAsync(data_, stream_); }
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;
  T* data() const { return data_; }

 private:
  T* data_ = nullptr;
  cudaStream_t stream_;
};

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

}  // namespace pf

namespace pf {

// W elements of T in registers, loaded and stored as 16-byte words.
template <typename T, int W> struct alignas(16) Vec {
  static_assert(sizeof(T) * W % 16 == 0, "a Vec is whole 16-byte words");
  T v[W];
};

template <int W, typename T> __device__ inline Vec<T, W> load_vec(const T* at) {
  Vec<T, W> out;
  const uint4* from = reinterpret_cast<const uint4*>(at);
  uint4* to = reinterpret_cast<uint4*>(&out);
#pragma unroll
  for (int k = 0; k < int(sizeof(out) / 16); ++k) to[k] = from[k];
  return out;
}

template <int W, typename T> __device__ inline void store_vec(T* at, const Vec<T, W>& value) {
  const uint4* from = reinterpret_cast<const uint4*>(&value);
  uint4* to = reinterpret_cast<uint4*>(at);
#pragma unroll
  for (int k = 0; k < int(sizeof(value) / 16); ++k) to[k] = from[k];
}

// Are all of `pointers` + lo on 16-byte boundaries?
template <typename... P> inline bool aligned16(int64_t lo, P*... pointers) {
  return ((reinterpret_cast<uintptr_t>(pointers + lo) % 16 == 0) && ...);
}

template <int W, typename V> __global__ void vector_kernel(int64_t lo, int64_t groups, V f) {
  for (int64_t g = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; g < groups;
       g += int64_t(gridDim.x) * blockDim.x) {
    f(lo + g * W);
  }
}

// A kernel whose threads take W consecutive elements with 16-byte loads and stores
// (`vec(i0)`) where every pointer it touches is aligned at lo; the rest of the range,
// or all of it when unaligned, element by element (`scalar(i)`).
template <int W, typename V, typename S>
void launch_vectorized(int64_t lo, int64_t hi, bool aligned, cudaStream_t stream, V vec,
                       S scalar) {
  if (hi <= lo) return;
  int64_t groups = aligned ? (hi - lo) / W : 0;
  if (groups > 0) {
    auto* kernel = &vector_kernel<W, V>;
    PF_LAUNCH(kernel, grid_for(groups), stream, lo, groups, vec);
    PF_CUDA(cudaGetLastError());
  }
  launch(lo + groups * W, hi, stream, scalar);
}

}  // namespace pf

namespace pf {

// What every CUDA schedule adds to pf::ScheduleImpl: its tensors as device slots (data
// is device memory; the caller reads and writes it directly, between steps).
class DeviceSchedule : public ScheduleImpl {
 public:
  virtual std::vector<Slot> device_tensors() = 0;
  // Program::bind / unbind / compute_stream (see the generated header).
  virtual void bind(const std::string& name, void* device_data) = 0;
  virtual void unbind() = 0;
  virtual cudaStream_t compute_stream() = 0;
};

}  // namespace pf
