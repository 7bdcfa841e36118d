// Chunked pipelines of the CUDA backend's fused collectives: chunk c of every rank's
// block is reduce-scattered on the communication stream, transformed by the fused
// kernel on the compute stream once an event says it is reduced, and gathered on the
// communication stream once an event says it is computed, while chunk c+1 is reduced.
// NCCL wants equal counts: each chunk's pieces are padded to the largest piece, and packed
// next to each other; a chunk whose pieces already are (PaddedChunks::in_whole) is reduced
// from and gathered into the tensor itself, and a piece of this rank's that is not padded
// is received into and sent from its block: no memset and no copies.
#pragma once
#include "ccn/namespace.hpp"
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <vector>

#include "ccn/cuda/check.cuh"
#include "ccn/cuda/nccl_util.cuh"
#include "ccn/cuda/padded_chunks.hpp"
#include "ccn/mpi_util.hpp"

namespace parafuse::ccn {

// The pieces and events of a pipelined fused collective on the device.
struct DeviceChunks : PaddedChunks {
  std::vector<cudaEvent_t> reduced, computed;

  DeviceChunks(int64_t rows, int64_t row_elems, int parts, int chunks)
      : PaddedChunks(rows, row_elems, parts, chunks), reduced(chunks), computed(chunks) {
    for (int c = 0; c < chunks; ++c) {
      PF_CUDA(cudaEventCreateWithFlags(&reduced[c], cudaEventDisableTiming));
      PF_CUDA(cudaEventCreateWithFlags(&computed[c], cudaEventDisableTiming));
    }
  }
  ~DeviceChunks() {
    for (cudaEvent_t e : reduced) cudaEventDestroy(e);
    for (cudaEvent_t e : computed) cudaEventDestroy(e);
  }
  DeviceChunks(const DeviceChunks&) = delete;
  // A device-to-device copy on `stream`, as pack/unpack take it.
  static auto on(cudaStream_t stream) {
    return [stream](const auto* from, auto* to, int64_t n) { copy(from, to, n, stream); };
  }
  DeviceChunks& operator=(const DeviceChunks&) = delete;

  // Reduce-scatter chunk c of `whole` (the rank's local tensor) into `block` (its block).
  // `packed` and `received` hold scratch() elements (nullptr where that is 0).
  template <typename T>
  void scatter(const T* whole, T* block, T* packed, T* received, int c, int rank, ReduceOp op,
               ncclComm_t comm, cudaStream_t stream) const {
    const T* send = whole + plan.whole_displs[c][0];
    if (!in_whole[c]) {
      T* pack = packed + offset[c];
      if (padded[c]) PF_CUDA(cudaMemsetAsync(pack, 0, sizeof(T) * piece[c] * plan.parts, stream));
      PaddedChunks::pack(whole, packed, c, on(stream));
      send = pack;
    }
    auto [lo, hi] = plan.mine(rank, c);
    T* mine = hi - lo == piece[c] ? block + lo : received + offset[c];
    PF_NCCL(ncclReduceScatter(send, mine, piece[c], nccl_type<T>(), nccl_op(op), comm, stream));
    copy(mine, block + lo, hi - lo, stream);  // nothing where it was received in place
    PF_CUDA(cudaEventRecord(reduced[c], stream));
  }

  // Gather chunk c of every rank's `block` into `whole`.
  template <typename T>
  void gather(const T* block, T* whole, T* sent, T* received, int c, int rank, ncclComm_t comm,
              cudaStream_t stream) const {
    auto [lo, hi] = plan.mine(rank, c);
    const T* send = block + lo;
    if (hi - lo != piece[c]) {  // this rank's piece, padded, in chunk c's slot
      copy(block + lo, sent + offset[c], hi - lo, stream);
      send = sent + offset[c];
    }
    T* all = in_whole[c] ? whole + plan.whole_displs[c][0] : received + offset[c];
    PF_NCCL(ncclAllGather(send, all, piece[c], nccl_type<T>(), comm, stream));
    if (!in_whole[c]) unpack(received, whole, c, on(stream));
  }
};

}  // namespace parafuse::ccn

namespace parafuse::ccn {

// One event per chunk: chunk c of a producer done on its stream (overlap).
struct ChunkEvents {
  std::vector<cudaEvent_t> done;
  explicit ChunkEvents(int chunks) : done(chunks) {
    for (cudaEvent_t& e : done) PF_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  ~ChunkEvents() {
    for (cudaEvent_t e : done) cudaEventDestroy(e);
  }
  ChunkEvents(const ChunkEvents&) = delete;
  ChunkEvents& operator=(const ChunkEvents&) = delete;
};

}  // namespace parafuse::ccn
