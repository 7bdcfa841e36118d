// Memory that every rank of a communicator can read, when all of them run on one node:
// an MPI-3 shared-memory window with one segment per rank. The fused collectives of the
// CPU backend use it to reduce and gather with plain loads and stores instead of
// messages (what NCCL does between GPUs of one node). Across nodes, or with
// PARAFUSE_FUSED_TRANSPORT=mpi, it stays empty and callers use MPI's collectives.
// Each segment starts with its rank's arrival counter (ccn/cpu/node_sync.hpp): fence()
// is a barrier on those counters, whose waiters sleep instead of polling (as
// MPI_Barrier does).
// Where the windows' backing directory (Open MPI's osc_sm_backing_directory, /dev/shm by
// default: 64 MiB in a default Docker container) lacks the room, the ranks agree to use
// MPI and rank 0 says so once on stderr: Open MPI's own allocation would hang the other
// ranks (it fails on the rank that creates the file, before the broadcast they wait in)
// or let them fault on pages tmpfs cannot give.
#pragma once
#include "ccn/namespace.hpp"
#include <mpi.h>
#include <sys/statvfs.h>

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "ccn/cpu/node_sync.hpp"
#include "ccn/mpi_util.hpp"

namespace parafuse::ccn {

// Does the environment ask for MPI's collectives in fused stages?
inline bool fused_transport_is_mpi() {
  const char* choice = std::getenv("PARAFUSE_FUSED_TRANSPORT");
  return choice != nullptr && std::strcmp(choice, "mpi") == 0;
}

// One contiguous piece per thread: large pieces let memcpy use streaming stores.
template <typename T> void parallel_copy(const T* from, int64_t count, T* to) {
  #pragma omp parallel
  {
    const int64_t threads = omp_get_num_threads(), piece = (count + threads - 1) / threads;
    const int64_t lo = std::min(count, omp_get_thread_num() * piece);
    const int64_t hi = std::min(count, lo + piece);
    if (hi > lo) std::memcpy(to + lo, from + lo, static_cast<size_t>(hi - lo) * sizeof(T));
  }
}

// The directory of Open MPI's shared-window files.
inline std::string shared_window_directory() {
  const char* chosen = std::getenv("OMPI_MCA_osc_sm_backing_directory");
  return chosen != nullptr && *chosen != '\0' ? chosen : "/dev/shm";
}

// Bytes free in `directory` to an unprivileged writer, or -1 where it cannot be used.
inline int64_t free_bytes(const std::string& directory) {
  struct statvfs fs;
  if (statvfs(directory.c_str(), &fs) != 0) return -1;
  return static_cast<int64_t>(fs.f_bavail) * static_cast<int64_t>(fs.f_frsize);
}

// Once per process, on rank 0 of the collective that cannot have its window: `why`
// names the directory and what is wrong with it.
inline void warn_no_shared_memory(const std::string& why) {
  static bool warned = false;
  if (warned) return;
  warned = true;
  std::fprintf(stderr, "parafuse: warning: %s; the fused collectives use MPI instead (slower). "
                       "Give it room (docker run --shm-size), or set "
                       "PARAFUSE_FUSED_TRANSPORT=mpi to choose MPI.\n", why.c_str());
}

// Why `directory` cannot hold `needed` bytes, with `available` free (-1: unusable).
inline std::string no_room(const std::string& directory, int64_t needed, int64_t available) {
  if (available < 0) return "cannot use " + directory + " for node-shared memory";
  char text[160];
  std::snprintf(text, sizeof text, "%s has %.1f MiB free, node-shared memory needs %.1f MiB",
                directory.c_str(), static_cast<double>(available) / (1 << 20),
                static_cast<double>(needed) / (1 << 20));
  return text;
}

class NodeShared {
 public:
  NodeShared() = default;
  NodeShared(const NodeShared&) = delete;
  NodeShared& operator=(const NodeShared&) = delete;
  ~NodeShared() { release(); }

  // Collective over `comm`: a segment of `bytes` per rank (after its arrival counter), or
  // nothing (usable() is false) when the ranks span nodes, the environment asks for MPI,
  // the backing directory lacks the room or a rank cannot allocate its segment (rank 0
  // warns once). The fused collectives then use MPI (docs/ccn.md).
  void create(MPI_Comm comm, int64_t bytes) {
    release();
    PF_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_));
    int local = comm_size(node_) == comm_size(comm) && !fused_transport_is_mpi(), all = 0;
    PF_MPI(MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_MIN, comm));
    if (!all) {
      MPI_Comm_free(&node_);
      return;
    }
    // Every window this process's collectives hold on the node, and this one, must fit.
    const int64_t window = comm_size(node_) * (kHeader + bytes);
    const std::string directory = shared_window_directory();
    const int64_t available = free_bytes(directory);
    int room = available >= promised() + window;
    PF_MPI(MPI_Allreduce(&room, &all, 1, MPI_INT, MPI_MIN, comm));
    if (!all) {
      if (comm_rank(comm) == 0)
        warn_no_shared_memory(no_room(directory, promised() + window, available));
      MPI_Comm_free(&node_);
      return;
    }
    MPI_Info info;
    PF_MPI(MPI_Info_create(&info));
    PF_MPI(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    void* base = nullptr;
    // Ranks keep comm's order (equal keys), so a segment's owner is its rank in comm. If
    // any rank cannot get its segment (a small /dev/shm), every rank uses MPI instead.
    PF_MPI(MPI_Comm_set_errhandler(node_, MPI_ERRORS_RETURN));
    int made = MPI_Win_allocate_shared(static_cast<MPI_Aint>(kHeader + bytes), 1, info,
                                       node_, &base, &win_) == MPI_SUCCESS;
    PF_MPI(MPI_Info_free(&info));
    PF_MPI(MPI_Allreduce(&made, &all, 1, MPI_INT, MPI_MIN, comm));
    if (!all) {
      if (comm_rank(comm) == 0)
        warn_no_shared_memory("Open MPI could not allocate node-shared memory in " + directory);
      if (made) MPI_Win_free(&win_);
      win_ = MPI_WIN_NULL;
      MPI_Comm_free(&node_);
      return;
    }
    window_ = window;
    promised() += window_;
    int ranks = comm_size(node_);
    segments_.assign(ranks, nullptr);
    std::vector<NodeArrivals*> arrivals(ranks);
    for (int r = 0; r < ranks; ++r) {
      MPI_Aint size = 0;
      int unit = 1;
      void* start = nullptr;
      PF_MPI(MPI_Win_shared_query(win_, r, &size, &unit, &start));
      arrivals[r] = static_cast<NodeArrivals*>(start);
      segments_[r] = static_cast<char*>(start) + kHeader;
    }
    rank_ = comm_rank(node_);
    new (arrivals[rank_]) NodeArrivals();  // each rank sets up its own counter
    barrier_.attach(std::move(arrivals), rank_);
    PF_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_));
    PF_MPI(MPI_Barrier(node_));  // every counter is set up before anyone arrives
  }

  bool usable() const { return win_ != MPI_WIN_NULL; }
  template <typename T> T* mine() const { return static_cast<T*>(segments_[rank_]); }
  template <typename T> const T* of(int rank) const { return static_cast<const T*>(segments_[rank]); }

  // Every rank's stores before the fence are visible to every rank's loads after it.
  void fence() { barrier_(); }
  // The fence in two halves: stores before arrive() are visible after wait(its epoch).
  uint32_t arrive() { return barrier_.arrive(); }
  void wait(uint32_t epoch) const { barrier_.wait(epoch); }

 private:
  void release() {
    if (win_ != MPI_WIN_NULL) {
      MPI_Win_unlock_all(win_);
      MPI_Win_free(&win_);
      promised() -= window_;
      window_ = 0;
    }
    if (node_ != MPI_COMM_NULL) MPI_Comm_free(&node_);
    segments_.clear();
  }

  // Bytes of the node's windows that this process's collectives hold (the same on every
  // rank: they create them in the same order).
  static int64_t& promised() {
    static int64_t bytes = 0;
    return bytes;
  }

  // the arrival counter's room at the start of each segment (keeps the data 64-aligned)
  static constexpr int64_t kHeader = sizeof(NodeArrivals);
  static_assert(kHeader % 64 == 0, "segment data stays 64-byte aligned");

  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  std::vector<void*> segments_;
  NodeBarrier barrier_;
  int rank_ = 0;
  int64_t window_ = 0;  // this window's bytes on the node, counted in promised()
};

// A value's block, in this rank's own memory or, once placed, in its shared segment
// of a fused collective (then the collective reads or writes it without a copy).
template <typename T> class PlacedBuffer {
 public:
  void resize(int64_t count) {
    own_.assign(count, T());
    data_ = own_.data();
    size_ = count;
  }
  // Use `shared` (room for size() elements, or null for "stay in own memory").
  void place(T* shared) {
    if (shared == nullptr) return;
    std::fill(shared, shared + size_, T());
    std::vector<T>().swap(own_);
    data_ = shared;
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](int64_t i) { return data_[i]; }
  const T& operator[](int64_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  int64_t size() const { return size_; }

 private:
  std::vector<T> own_;
  T* data_ = nullptr;
  int64_t size_ = 0;
};

}  // namespace parafuse::ccn
