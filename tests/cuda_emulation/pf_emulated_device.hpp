// The emulated device behind tests/cuda_emulation/: device memory, streams, events and
// kernel launches of the CUDA runtime, on the CPU of one MPI rank.
//
// Stream order is kept and nothing more: work queued on a stream runs in queue order
// once what it waits for (events recorded on other streams) has run. When it runs is
// the schedule, chosen by PF_EMU_LAZY:
//   none   every operation runs when it is queued (a synchronous device);
//   even   streams created at an even index (0, 2, ...: the compute stream of
//          pf::Streams) run only when something waits for them; the others run at once;
//   odd    the same with odd indices (the communication stream runs late).
// A missing event between two streams then shows as a stale read in one of the schedules.
// Memory from cudaMalloc/cudaMallocAsync starts as 0xff bytes (NaN for floats) and is
// overwritten with them when freed, so reads of unwritten or freed memory show in results.
// Kernels run block after block; the threads of a block are fibers (ucontext) switched
// at __syncthreads, which therefore means what it means on a GPU (all threads of the block
// must reach it), in forward order in even blocks and reverse order in odd ones.
#pragma once
#include <ucontext.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

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

namespace pf_emu {

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "cuda emulation: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// ---- memory ------------------------------------------------------------------------
constexpr unsigned char kPoison = 0xff;

inline std::map<uintptr_t, size_t>& allocations() {
  static std::map<uintptr_t, size_t> all;
  return all;
}

inline void* allocate(size_t bytes) {
  size_t rounded = (std::max<size_t>(bytes, 1) + 255) / 256 * 256;
  void* p = std::aligned_alloc(256, rounded);
  if (!p) return nullptr;
  std::memset(p, kPoison, rounded);
  allocations()[reinterpret_cast<uintptr_t>(p)] = bytes;
  return p;
}

inline void release(void* p) {
  auto found = allocations().find(reinterpret_cast<uintptr_t>(p));
  if (found == allocations().end()) fail("free of a pointer that is not device memory");
  std::memset(p, kPoison, found->second);
  allocations().erase(found);
  std::free(p);
}

// Is [p, p + bytes) inside one device allocation?
inline bool is_device(const void* p, size_t bytes = 0) {
  auto at = reinterpret_cast<uintptr_t>(p);
  auto next = allocations().upper_bound(at);
  if (next == allocations().begin()) return false;
  --next;
  return at >= next->first && at + bytes <= next->first + std::max<size_t>(next->second, 1);
}

inline void require_device(const void* p, size_t bytes, const char* what) {
  if (bytes > 0 && !is_device(p, bytes)) {
    fail(std::string(what) + ": " + std::to_string(bytes) +
         " bytes that are not inside one device allocation");
  }
}

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
};
struct Ordered {
  uint64_t queued = 0, done = 0;
};
struct Event {
  Stream* stream = nullptr;
  uint64_t position = 0;
};

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
    if (m != "none" && m != "even" && m != "odd") fail("PF_EMU_LAZY is none, even or odd");
    return m;
  }();
  return mode;
}

inline Stream* create_stream() {
  auto stream = std::make_unique<Stream>();
  stream->index = static_cast<int>(streams().size());
  const std::string& mode = lazy_mode();
  stream->lazy = (mode == "even" && stream->index % 2 == 0) ||
                 (mode == "odd" && stream->index % 2 == 1);
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
  op.run();
  ++stream->done;
  if (op.order) ++op.order->done;
}

inline void drain(Stream* stream, uint64_t position) {
  while (stream->done < position) run_head(stream);
}

inline void drain_all() {
  drain(legacy_stream(), legacy_stream()->queued);
  for (auto& s : streams()) drain(s.get(), s->queued);
}

inline void enqueue(Stream* stream, std::function<void()> run, std::vector<Dep> deps = {},
                    Ordered* order = nullptr) {
  stream = resolve(stream);
  Op op{std::move(run), std::move(deps), order, 0};
  if (order) op.order_index = order->queued++;
  stream->pending.push_back(std::move(op));
  ++stream->queued;
  if (!stream->lazy) drain(stream, stream->queued);
}

// ---- kernels -----------------------------------------------------------------------
constexpr size_t kFiberStack = 256 * 1024;

struct Fiber {
  ucontext_t context;
  std::unique_ptr<char[]> stack;
  bool done = false;
};

struct BlockRun {
  ucontext_t scheduler;
  std::vector<Fiber> fibers;
  Fiber* current = nullptr;
  const std::function<void()>* body = nullptr;
};

inline BlockRun& block_run() {
  static BlockRun run;
  return run;
}

inline void fiber_main() {
  BlockRun& run = block_run();
  (*run.body)();
  run.current->done = true;  // returns to run.scheduler through uc_link
}

inline void syncthreads() {
  BlockRun& run = block_run();
  if (!run.current) fail("__syncthreads outside a kernel");
  swapcontext(&run.current->context, &run.scheduler);
}

// Run `body` as every thread of every block: blocks in order, threads as fibers.
inline void run_grid(dim3 grid, dim3 block, const std::function<void()>& body) {
  BlockRun& run = block_run();
  const unsigned threads = block.x * block.y * block.z;
  if (run.fibers.size() < threads) run.fibers.resize(threads);
  run.body = &body;
  gridDim = grid;
  blockDim = block;
  for (unsigned b = 0; b < grid.x * grid.y * grid.z; ++b) {
    blockIdx = uint3{b % grid.x, (b / grid.x) % grid.y, b / (grid.x * grid.y)};
    for (unsigned t = 0; t < threads; ++t) {
      Fiber& fiber = run.fibers[t];
      if (!fiber.stack) fiber.stack.reset(new char[kFiberStack]);
      getcontext(&fiber.context);
      fiber.context.uc_stack.ss_sp = fiber.stack.get();
      fiber.context.uc_stack.ss_size = kFiberStack;
      fiber.context.uc_link = &run.scheduler;
      makecontext(&fiber.context, fiber_main, 0);
      fiber.done = false;
    }
    // One round per __syncthreads interval. Odd blocks run their threads in reverse, so
    // that a read of another thread's write with no barrier between them goes stale in
    // one direction or the other.
    for (unsigned waiting = threads; waiting > 0;) {
      unsigned finished = 0;
      waiting = 0;
      for (unsigned k = 0; k < threads; ++k) {
        const unsigned t = b % 2 ? threads - 1 - k : k;
        Fiber& fiber = run.fibers[t];
        if (fiber.done) continue;
        threadIdx = uint3{t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
        run.current = &fiber;
        swapcontext(&run.scheduler, &fiber.context);
        (fiber.done ? finished : waiting) += 1;
      }
      if (finished > 0 && waiting > 0) {
        fail("threads of one block reach __syncthreads a different number of times");
      }
    }
  }
  run.current = nullptr;
}

inline int& last_error() {
  static int error = 0;
  return error;
}

// A kernel launch: checked like the CUDA runtime checks it, then queued on `stream`.
inline void launch(dim3 grid, dim3 block, Stream* stream, std::function<void()> body) {
  const uint64_t threads = uint64_t(block.x) * block.y * block.z;
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || threads == 0 || threads > 1024 ||
      grid.y > 65535 || grid.z > 65535) {
    last_error() = 9;  // cudaErrorInvalidConfiguration
    return;
  }
  enqueue(stream,
          [grid, block, body = std::move(body)] { run_grid(grid, block, body); });
}

}  // namespace pf_emu
