// The two collectives of a fused group, chunk by chunk, so that chunk c of this rank's
// block can be transformed as soon as it is reduced and gathered as soon as it is final.
//
// When every rank of the communicator runs on one node (the common case, and every
// test), the reduction reads the other ranks' inputs straight from shared memory and
// accumulates in the compute type in rank order (the reference's order, one rounding),
// and the gather copies each finished chunk once into shared memory; no message is sent.
// Otherwise they are MPI's nonblocking collectives, pipelined: chunk c+1 is being
// reduced while chunk c is transformed, and gathers complete in the background.
#pragma once
#include "ccn/namespace.hpp"
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <cstdint>
#include <vector>

#include "ccn/chunk_plan.hpp"
#include "ccn/cpu/math.hpp"
#include "ccn/cpu/node_shared.hpp"
#include "ccn/cpu/pipeline.hpp"
#include "ccn/cpu/rank_order_reduce.hpp"
#include "ccn/mpi_util.hpp"

namespace parafuse::ccn {

// Chunks for a fused group when `tune` did not fix them. Shared memory: about 128 KiB of
// the reduced type each, so that a reduced chunk is still in cache when the computation
// reads it. MPI: auto_chunks (ccn/chunk_plan.hpp).
inline int fused_auto_chunks(bool shared, int64_t bytes) {
  if (!shared) return auto_chunks(bytes);
  return static_cast<int>(std::clamp<int64_t>(bytes / (128 * 1024), 1, 1 << 16));
}

template <typename T> class ChunkedReduceScatter {
 public:
  // Collective over `comm`; each rank's input has `whole_count` elements.
  void setup(MPI_Comm comm, int64_t whole_count, ReduceOp op) {
    comm_ = comm;
    op_ = op;
    rank_ = comm_rank(comm);
    shared_.create(comm, whole_count * static_cast<int64_t>(sizeof(T)));
  }
  bool shared() const { return shared_.usable(); }
  // Where the input may live to be read by the other ranks without a copy (or null).
  T* segment() const { return shared() ? shared_.mine<T>() : nullptr; }

  // Reduce every rank's `input` (the whole tensor) into `out` (this rank's block) by `plan`.
  void start(const T* input, T* out, const ChunkPlan& plan) {
    input_ = input;
    out_ = out;
    plan_ = &plan;
    if (shared()) {
      if (input != segment()) publish(input, plan);  // else the compiler placed it there
      shared_.fence();
      return;
    }
    packed_.assign(plan.chunks == 1 ? 0 : plan.block_start.back() * plan.row_elems +
                                               plan.block_rows.back() * plan.row_elems, T());
    requests_.assign(plan.chunks, MPI_REQUEST_NULL);
    post(0);
  }

  // Chunk c of this rank's block (plan.mine(rank, c)) is reduced into `out`.
  void finish(int c) {
    auto [lo, hi] = plan_->mine(rank_, c);
    if (shared()) {
      reduce_shared(lo, hi, plan_->whole_displs[c][rank_]);
      return;
    }
    if (c + 1 < plan_->chunks) post(c + 1);
    PF_MPI(MPI_Wait(&requests_[c], MPI_STATUS_IGNORE));
    if (op_ == ReduceOp::avg) divide_by(out_ + lo, hi - lo, plan_->parts);
  }

  // After the last chunk: every rank is done reading this rank's shared segment before
  // anyone writes it again. `gathered_after`: a gather of the same ranks follows in this
  // step; its completion already says so (each rank gathers after its reductions).
  void done(bool gathered_after) {
    if (shared() && !gathered_after) shared_.fence();
  }

 private:
  // Copy the other ranks' blocks of this rank's contribution into its segment.
  void publish(const T* input, const ChunkPlan& plan) {
    for (int r = 0; r < plan.parts; ++r) {
      if (r == rank_) continue;
      const int64_t from = plan.block_start[r] * plan.row_elems;
      parallel_copy(input + from, plan.block_rows[r] * plan.row_elems, segment() + from);
    }
  }

  void post(int c) {
    const ChunkPlan& plan = *plan_;
    MPI_Op op = mpi_op<T>(op_);
    if (plan.chunks == 1) {  // no pipeline: Open MPI's blocking collective is faster
      PF_MPI(MPI_Reduce_scatter(input_, out_, plan.mpi_counts_of(0).data(), mpi_type<T>(), op, comm_));
      return;
    }
    plan.pack(input_, packed_.data(), c);
    auto [lo, hi] = plan.mine(rank_, c);
    PF_MPI(MPI_Ireduce_scatter(packed_.data() + plan.packed_offset[c], out_ + lo,
                               plan.mpi_counts_of(c).data(), mpi_type<T>(), op, comm_, &requests_[c]));
  }

  // out[lo, hi) = op over ranks (in rank order) of their elements at `whole` onwards.
  void reduce_shared(int64_t lo, int64_t hi, int64_t whole) {
    std::vector<const T*> sources(plan_->parts);
    for (int r = 0; r < plan_->parts; ++r) {
      sources[r] = (r == rank_ ? input_ : shared_.of<T>(r)) + whole;
    }
    reduce_in_rank_order(sources, hi - lo, out_ + lo, op_);
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  ReduceOp op_ = ReduceOp::sum;
  int rank_ = 0;
  NodeShared shared_;
  const T* input_ = nullptr;
  T* out_ = nullptr;
  const ChunkPlan* plan_ = nullptr;
  std::vector<T> packed_;
  std::vector<MPI_Request> requests_;
};

template <typename T> class ChunkedAllgather {
 public:
  // Collective over `comm`; no rank's block has more than `max_block_count` elements.
  void setup(MPI_Comm comm, int64_t max_block_count) {
    comm_ = comm;
    rank_ = comm_rank(comm);
    shared_.create(comm, max_block_count * static_cast<int64_t>(sizeof(T)));
  }
  bool shared() const { return shared_.usable(); }
  // Where the block may live to be read by the other ranks without a copy (or null).
  T* segment() const { return shared() ? shared_.mine<T>() : nullptr; }

  // Gather every rank's block into `whole` by `plan`.
  void start(T* whole, const ChunkPlan& plan) {
    whole_ = whole;
    plan_ = &plan;
    requests_.clear();
    wait_for_last_copies();
  }

  // Chunk c of this rank's block (which starts at `block`) is final.
  void chunk(int c, const T* block) {
    const ChunkPlan& plan = *plan_;
    auto [lo, hi] = plan.mine(rank_, c);
    if (shared()) {
      if (block != segment()) std::copy(block + lo, block + hi, segment() + lo);
      std::copy(block + lo, block + hi, whole_ + plan.whole_displs[c][rank_]);
      return;
    }
    const int count = static_cast<int>(hi - lo);
    if (plan.chunks == 1) {
      PF_MPI(MPI_Allgatherv(block + lo, count, mpi_type<T>(), whole_, plan.mpi_counts_of(c).data(),
                            plan.mpi_whole_displs_of(c).data(), mpi_type<T>(), comm_));
      return;
    }
    requests_.emplace_back();
    PF_MPI(MPI_Iallgatherv(block + lo, count, mpi_type<T>(), whole_, plan.mpi_counts_of(c).data(),
                           plan.mpi_whole_displs_of(c).data(), mpi_type<T>(), comm_, &requests_.back()));
    progress(requests_);
  }

  // Every rank's block is in `whole`. `written_after_start`: this rank's segment is
  // written only after start() (by chunk(), or by the loop that computes the block).
  void finish(bool written_after_start) {
    if (!shared()) {
      wait_all(requests_);
      return;
    }
    shared_.fence();
    const ChunkPlan& plan = *plan_;
    for (int r = 0; r < plan.parts; ++r) {
      if (r == rank_) continue;
      parallel_copy(shared_.of<T>(r), plan.block_rows[r] * plan.row_elems,
                    whole_ + plan.block_start[r] * plan.row_elems);
    }
    // Nobody may overwrite a segment that another rank still copies: this rank says it
    // is done, and waits for the others now, or where the segment is only written after
    // start(), at the next start() (by then they are done, as a rule). (A full barrier
    // here and one after every reduce-scatter would make four meetings per fused step.)
    released_ = shared_.arrive();
    release_pending_ = true;
    if (!written_after_start) wait_for_last_copies();
  }

 private:
  void wait_for_last_copies() {  // the other ranks' copies out of this rank's segment
    if (release_pending_) shared_.wait(released_);
    release_pending_ = false;
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  NodeShared shared_;
  T* whole_ = nullptr;
  const ChunkPlan* plan_ = nullptr;
  std::vector<MPI_Request> requests_;
  uint32_t released_ = 0;  // the arrival that ended the last gather's copies
  bool release_pending_ = false;
};

}  // namespace parafuse::ccn
