// The emulated CUDA device (ccn/cuda_emulated/, README.md there): device memory, streams, events and
// kernel launches of the CUDA runtime, on the CPU of one MPI rank.
//
// Stream order is kept and nothing more: work queued on a stream runs in queue order
// once what it waits for (events recorded on other streams) has run. When it runs is
// the schedule, chosen by PF_EMU_LAZY:
//   none   every operation runs when it is queued (a synchronous device);
//   even   streams of the least priority (the compute stream of pf::Streams, and any
//          stream created without one) run only when something waits for them; the
//          others run at once;
//   odd    the same with streams of a greater priority (the communication streams);
//   all    every stream created by the program runs only when something waits for it, as
//          late as a GPU may run it: a clock the host stops before a wait measures nothing.
// A missing event between two streams then shows as a stale read in one of the schedules.
// PF_EMU_OPERATION_US=N models a device that takes time: each operation of a stream takes
// at least N microseconds when it runs (0 unless set), so that a step's true time is at
// least N times the operations it queued.
// Memory from cudaMalloc/cudaMallocAsync starts as 0xff bytes (NaN for floats), so reads of
// unwritten memory show in results; pf_emulated_memory.hpp keeps it from the host outside
// the device's operations and counts what each operation reads and writes.
// Kernels run block after block (pf_emulated_kernels.hpp).
#pragma once
#include "ccn/namespace.hpp"
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ccn/cuda_emulated/pf_emulated_memory.hpp"

struct uint3 {
  unsigned int x = 0, y = 0, z = 0;
};
struct dim3 {
  unsigned int x = 1, y = 1, z = 1;
  dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct alignas(16) uint4 {
  unsigned int x, y, z, w;
};

inline uint3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;

namespace parafuse::ccn::emulated {

// ---- streams and events ------------------------------------------------------------
struct Stream;
struct Dep {
  Stream* stream;
  uint64_t position;  // satisfied once `stream` has run this many operations
};
struct Ordered;  // a communicator: its operations run in the order they were queued
struct Op {
  std::function<void()> run;
  std::vector<Dep> deps;
  Ordered* order = nullptr;
  uint64_t order_index = 0;
};
struct Stream {
  std::deque<Op> pending;
  uint64_t queued = 0, done = 0;
  bool lazy = false, busy = false;
  int index = -1;
  int device = 0;  // the device current when it was created
};
struct Ordered {
  uint64_t queued = 0, done = 0;
};
struct Event {
  Stream* stream = nullptr;
  uint64_t position = 0;
};

// ---- devices: PF_EMU_DEVICES of them (2 unless set), the current one per host thread, as
// in CUDA; work queued on a stream of another device than the current one fails, so that
// a missing cudaSetDevice shows.
inline int device_count() {
  static const int count = [] {
    const char* value = std::getenv("PF_EMU_DEVICES");
    int n = value ? std::atoi(value) : 2;
    if (n < 1) fail("PF_EMU_DEVICES is a number of devices, at least 1");
    return n;
  }();
  return count;
}

inline int& current_device() {
  thread_local int device = 0;
  return device;
}

inline std::vector<std::unique_ptr<Stream>>& streams() {
  static std::vector<std::unique_ptr<Stream>> all;
  return all;
}

inline Stream* legacy_stream() {
  static Stream legacy;
  return &legacy;
}

inline const std::string& lazy_mode() {
  static const std::string mode = [] {
    const char* value = std::getenv("PF_EMU_LAZY");
    std::string m = value ? value : "none";
    if (m != "none" && m != "even" && m != "odd" && m != "all") {
      fail("PF_EMU_LAZY is none, even, odd or all");
    }
    return m;
  }();
  return mode;
}

inline std::chrono::microseconds operation_time() {
  static const std::chrono::microseconds time = [] {
    const char* value = std::getenv("PF_EMU_OPERATION_US");
    long long us = value ? std::atoll(value) : 0;
    if (us < 0) fail("PF_EMU_OPERATION_US is a number of microseconds, at least 0");
    return std::chrono::microseconds(us);
  }();
  return time;
}

inline Stream* create_stream(int priority = 0) {  // 0: the least (CUDA's default)
  auto stream = std::make_unique<Stream>();
  stream->index = static_cast<int>(streams().size());
  stream->device = current_device();
  const std::string& mode = lazy_mode();
  stream->lazy = mode == "all" || (mode == "even" && priority == 0) ||
                 (mode == "odd" && priority != 0);
  streams().push_back(std::move(stream));
  return streams().back().get();
}

inline Stream* resolve(Stream* stream) { return stream ? stream : legacy_stream(); }

inline void drain(Stream* stream, uint64_t position);

// The communicator operation that must run before `op`: queued earlier on `order`.
inline void run_earlier_on_order(const Op& op) {
  while (op.order->done < op.order_index) {
    bool found = false;
    for (auto& s : streams()) {
      uint64_t position = s->done;
      for (const Op& other : s->pending) {
        ++position;
        if (other.order == op.order && other.order_index == op.order->done) {
          drain(s.get(), position);
          found = true;
          break;
        }
      }
      if (found) break;
    }
    if (!found) fail("a communicator's earlier operation is not queued on any stream");
  }
}

inline void run_head(Stream* stream) {
  if (stream->busy) fail("streams wait for each other in a cycle (a device deadlock)");
  stream->busy = true;
  Op& head = stream->pending.front();
  for (const Dep& dep : head.deps) drain(dep.stream, dep.position);
  if (head.order) run_earlier_on_order(head);
  Op op = std::move(stream->pending.front());
  stream->pending.pop_front();
  stream->busy = false;
  {
    DeviceAccess access;
    const auto began = std::chrono::steady_clock::now();
    op.run();
    std::this_thread::sleep_until(began + operation_time());
  }
  ++stream->done;
  if (op.order) ++op.order->done;
}

inline void drain(Stream* stream, uint64_t position) {
  while (stream->done < position) run_head(stream);
}

// Operations queued on any stream and not yet run (a step that returned before its work
// ran leaves some where streams run late).
inline uint64_t queued_work() {
  uint64_t queued = legacy_stream()->queued - legacy_stream()->done;
  for (auto& s : streams()) queued += s->queued - s->done;
  return queued;
}

inline void drain_all() {
  drain(legacy_stream(), legacy_stream()->queued);
  for (auto& s : streams()) drain(s.get(), s->queued);
}

// Queue `run` on `stream`. A stream that does not run late runs it at once, unless `late`:
// then it runs when something orders it (a later operation of the stream, an event waited
// for, a synchronisation), as a copy from pageable host memory may complete on a GPU.
inline void enqueue(Stream* stream, std::function<void()> run, std::vector<Dep> deps = {},
                    Ordered* order = nullptr, bool late = false) {
  ++counts_now.operations;
  ++counts_now.calls;
  if (stream && stream->device != current_device()) {
    fail("work queued on a stream of device " + std::to_string(stream->device) +
         " while device " + std::to_string(current_device()) +
         " is current (a missing cudaSetDevice)");
  }
  stream = resolve(stream);
  Op op{std::move(run), std::move(deps), order, 0};
  if (order) op.order_index = order->queued++;
  stream->pending.push_back(std::move(op));
  ++stream->queued;
  if (!stream->lazy && !late) drain(stream, stream->queued);
}

}  // namespace parafuse::ccn::emulated
