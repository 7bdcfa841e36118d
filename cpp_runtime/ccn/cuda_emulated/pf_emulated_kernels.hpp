// Kernel launches of the emulated device (pf_emulated_device.hpp): the blocks of a grid in
// order, the threads of a block as fibers (ucontext) switched at __syncthreads, which
// therefore means what it means on a GPU (all threads of the block must reach it), in
// forward order in even blocks and reverse order in odd ones.
#pragma once
#include "ccn/namespace.hpp"
#include <ucontext.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "ccn/cuda_emulated/pf_emulated_device.hpp"

namespace parafuse::ccn::emulated {

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

// The grid of the last kernel launched (for tests of launch configurations).
inline dim3& last_grid() {
  static dim3 grid;
  return grid;
}

// A kernel launch: checked like the CUDA runtime checks it, then queued on `stream`.
inline void launch(dim3 grid, dim3 block, Stream* stream, std::function<void()> body) {
  last_grid() = grid;
  const uint64_t threads = uint64_t(block.x) * block.y * block.z;
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || threads == 0 || threads > 1024 ||
      grid.y > 65535 || grid.z > 65535) {
    last_error() = 9;  // cudaErrorInvalidConfiguration
    return;
  }
  enqueue(stream,
          [grid, block, body = std::move(body)] { run_grid(grid, block, body); });
}

}  // namespace parafuse::ccn::emulated
