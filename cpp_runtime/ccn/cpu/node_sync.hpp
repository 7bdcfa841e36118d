// Synchronisation of the ranks of one node through words in node-shared memory: each
// rank counts its arrivals (its epoch) and waits until every rank's count reaches its
// own. A waiter spins for a few tens of microseconds, then sleeps in the kernel (a
// futex on the word it waits for) until the rank it waits for arrives and wakes it.
//
// Why not MPI_Barrier: Open MPI's shared-memory transports poll while they wait, and a
// rank that polls keeps its core from the rank it waits for wherever the ranks share
// cores with other work. A sleeping waiter costs nothing, and the kernel runs it as
// soon as it is woken. On a quiet machine the spin covers the usual wait.
#pragma once
#include "ccn/namespace.hpp"
#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <climits>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#else
#include <thread>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace parafuse::ccn {

static_assert(std::atomic<uint32_t>::is_always_lock_free,
              "node-shared arrival counters must be lock-free (address-free) atomics");

// One rank's arrival counter and how many ranks sleep on it, on a cache line of its own.
struct alignas(64) NodeArrivals {
  std::atomic<uint32_t> epoch{0};
  std::atomic<uint32_t> sleepers{0};
};

namespace node_sync {

constexpr auto kSpin = std::chrono::microseconds(50);

inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Sleep while `word` holds `seen` (or return at once if it no longer does).
inline void sleep_while(std::atomic<uint32_t>& word, uint32_t seen) {
#if defined(__linux__)
  // not FUTEX_PRIVATE: the word lives in memory that other processes map
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT, seen, nullptr, nullptr, 0);
#else
  (void)word, (void)seen;
  std::this_thread::yield();
#endif
}

inline void wake_all(std::atomic<uint32_t>& word) {
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
#else
  (void)word;
#endif
}

// Has a counter at `value` reached `target`? (Counters wrap around.)
inline bool reached(uint32_t value, uint32_t target) {
  return static_cast<int32_t>(value - target) >= 0;
}

}  // namespace node_sync

// This rank's arrival: every store it made before is visible to a rank that sees it.
inline void arrive(NodeArrivals& mine, uint32_t epoch) {
  mine.epoch.store(epoch, std::memory_order_seq_cst);
  if (mine.sleepers.load(std::memory_order_seq_cst) != 0) node_sync::wake_all(mine.epoch);
}

// Wait until `other` has arrived at `epoch` (or later); its stores before then are visible.
inline void wait_for(NodeArrivals& other, uint32_t epoch) {
  using clock = std::chrono::steady_clock;
  if (node_sync::reached(other.epoch.load(std::memory_order_acquire), epoch)) return;
  const auto spin_until = clock::now() + node_sync::kSpin;
  while (clock::now() < spin_until) {
    for (int i = 0; i < 64; ++i) {
      if (node_sync::reached(other.epoch.load(std::memory_order_acquire), epoch)) return;
      node_sync::relax();
    }
  }
  for (;;) {
    other.sleepers.fetch_add(1, std::memory_order_seq_cst);
    const uint32_t seen = other.epoch.load(std::memory_order_seq_cst);
    if (!node_sync::reached(seen, epoch)) node_sync::sleep_while(other.epoch, seen);
    other.sleepers.fetch_sub(1, std::memory_order_seq_cst);
    if (node_sync::reached(other.epoch.load(std::memory_order_acquire), epoch)) return;
  }
}

// A barrier of the ranks whose counters are `all` (this rank's is all[rank]): arrive,
// then wait for every other rank to arrive at the same epoch.
class NodeBarrier {
 public:
  void attach(std::vector<NodeArrivals*> all, int rank) {
    all_ = std::move(all);
    rank_ = rank;
    epoch_ = 0;
  }
  void operator()() { wait(arrive()); }

  // The barrier in two halves, so that work can run between them: arrive() returns the
  // epoch that wait(epoch) completes. Every rank arrives as often and in the same order.
  uint32_t arrive() {
    pf::arrive(*all_[rank_], ++epoch_);
    return epoch_;
  }
  void wait(uint32_t epoch) const {
    for (size_t r = 0; r < all_.size(); ++r) {
      if (static_cast<int>(r) != rank_) wait_for(*all_[r], epoch);
    }
  }

 private:
  std::vector<NodeArrivals*> all_;
  int rank_ = 0;
  uint32_t epoch_ = 0;
};

}  // namespace parafuse::ccn
