// allreduce, reducescatter and allgather (along dim 0) of one stage when every rank of
// its communicator runs on one node: through a node-shared window (ccn/cpu/node_shared.hpp)
// instead of MPI's messages. Each rank copies what it contributes into its segment,
// the ranks meet once (a barrier whose waiters sleep, ccn/cpu/node_sync.hpp), and each
// rank reads what it needs straight from the other ranks' segments:
//   allreduce      every rank reduces the whole tensor, in rank order;
//   reducescatter  every rank reduces its block of rows, in rank order;
//   allgather      every rank copies every rank's block of rows.
// Reductions accumulate in the compute type and round once, as the reference does (so
// every rank computes the same bits). The segment holds two copies, used by turns: a
// rank may write the next call's copy while another still reads this one, and the one
// barrier of the call after next orders every read of a copy before it is written again.
// An `overlap` runs the allreduce in chunks, each published and met separately, so that
// the wait for the other ranks overlaps the computation of later chunks.
// Across nodes, or with PARAFUSE_FUSED_TRANSPORT=mpi, the calls are MPI's collectives
// (ccn/mpi_util.hpp).
#pragma once
#include "ccn/namespace.hpp"
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ccn/cpu/node_shared.hpp"
#include "ccn/cpu/rank_order_reduce.hpp"
#include "ccn/mpi_util.hpp"

namespace parafuse::ccn {

template <typename T> class NodeCollective {
 public:
  // Collective over `comm`; no rank contributes more than `count` elements per call.
  void setup(MPI_Comm comm, int64_t count) {
    comm_ = comm;
    rank_ = comm_rank(comm);
    parts_ = comm_size(comm);
    count_ = count;
    shared_.create(comm, 2 * count * static_cast<int64_t>(sizeof(T)));
  }
  bool shared() const { return shared_.usable(); }

  void allreduce(const T* in, T* out, int64_t count, ReduceOp op) {
    if (!shared()) return pf::allreduce(in, out, count, op, comm_);
    publish(in, count);
    reduce_in_rank_order(copies(0), count, out, op);
  }

  // `in`: the whole tensor (rows x row_elems); `out`: this rank's block of rows.
  void reduce_scatter(const T* in, T* out, int64_t rows, int64_t row_elems, ReduceOp op) {
    if (!shared()) return pf::reduce_scatter(in, out, rows, row_elems, op, comm_);
    const std::vector<int> counts = block_counts(rows, row_elems, parts_);
    publish(in, rows * row_elems);
    reduce_in_rank_order(copies(displacements(counts)[rank_]), counts[rank_], out, op);
  }

  // `in`: this rank's block of rows; `out`: the whole tensor.
  void allgather_rows(const T* in, T* out, int64_t rows, int64_t row_elems) {
    if (!shared()) return pf::allgather_rows(in, out, rows, row_elems, comm_);
    const std::vector<int> counts = block_counts(rows, row_elems, parts_);
    const std::vector<int> displs = displacements(counts);
    publish(in, counts[rank_]);
    const std::vector<const T*> blocks = copies(0);
    for (int r = 0; r < parts_; ++r) parallel_copy(blocks[r], counts[r], out + displs[r]);
  }

  // An allreduce in chunks (an `overlap`'s): begin_chunks(), then start_chunk for each
  // chunk [lo, hi) of the elements, in the same order on every rank, and finish_chunk
  // for each started chunk in that order (the oldest first) or finish_chunks for all.
  // Work between a start and its finish overlaps the other ranks' arrival. MPI: each
  // chunk is an MPI_Iallreduce; progress() lets Open MPI move them.
  void begin_chunks() {
    turn_ ^= 1;
    pending_.clear();
    next_ = 0;
  }
  void start_chunk(const T* in, T* out, int64_t lo, int64_t hi, ReduceOp op) {
    Chunk chunk{out, lo, hi, op, 0, MPI_REQUEST_NULL};
    if (shared()) {
      std::copy(in + lo, in + hi, shared_.mine<T>() + turn_ * count_ + lo);
      chunk.epoch = shared_.arrive();
    } else {
      PF_MPI(MPI_Iallreduce(in + lo, out + lo, static_cast<int>(hi - lo), mpi_type<T>(),
                            mpi_op<T>(op), comm_, &chunk.request));
    }
    pending_.push_back(chunk);
  }
  void progress() {
    for (size_t c = next_; c < pending_.size(); ++c) {
      int done = 0;
      PF_MPI(MPI_Test(&pending_[c].request, &done, MPI_STATUS_IGNORE));
    }
  }
  void finish_chunk() {
    Chunk& chunk = pending_.at(next_++);
    if (shared()) {
      shared_.wait(chunk.epoch);
      reduce_in_rank_order(copies(chunk.lo), chunk.hi - chunk.lo, chunk.out + chunk.lo, chunk.op);
      return;
    }
    PF_MPI(MPI_Wait(&chunk.request, MPI_STATUS_IGNORE));
    if (chunk.op == ReduceOp::avg) divide_by(chunk.out + chunk.lo, chunk.hi - chunk.lo, parts_);
  }
  void finish_chunks() {
    while (next_ < pending_.size()) finish_chunk();
  }

 private:
  struct Chunk {
    T* out;
    int64_t lo, hi;
    ReduceOp op;
    uint32_t epoch;
    MPI_Request request;
  };

  // Copy this rank's contribution into its segment's copy of this call; meet the others.
  void publish(const T* in, int64_t count) {
    turn_ ^= 1;
    parallel_copy(in, count, shared_.mine<T>() + turn_ * count_);
    shared_.fence();
  }

  // Every rank's copy of this call, from element `offset`, in rank order.
  std::vector<const T*> copies(int64_t offset) const {
    std::vector<const T*> sources(parts_);
    for (int r = 0; r < parts_; ++r) sources[r] = shared_.of<T>(r) + turn_ * count_ + offset;
    return sources;
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, parts_ = 1;
  int64_t count_ = 0;
  int turn_ = 0;
  NodeShared shared_;
  std::vector<Chunk> pending_;
  size_t next_ = 0;
};

}  // namespace parafuse::ccn
