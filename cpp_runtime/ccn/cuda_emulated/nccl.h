// The part of NCCL that generated .ccn projects call, on the emulated device: each
// communicator is an MPI communicator, each collective an operation queued on its stream
// that runs MPI on the device memory (which is host memory here). Reductions combine
// the ranks' values in rank order, rounding to the element type after every step as
// NCCL's rings do. A communicator's operations run in the order they were queued (NCCL's
// contract), whichever stream runs first. The emulated ncclCommInitRank splits
// MPI_COMM_WORLD, so every rank of the world must create the communicator.
#pragma once
#include "ccn/namespace.hpp"
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "ccn/cuda_emulated/cuda_bf16.h"
#include "ccn/cuda_emulated/cuda_fp16.h"
#include "ccn/cuda_emulated/cuda_runtime.h"

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5
} ncclResult_t;

typedef enum {
  ncclInt8 = 0, ncclChar = 0, ncclUint8 = 1, ncclInt32 = 2, ncclInt = 2, ncclUint32 = 3,
  ncclInt64 = 4, ncclUint64 = 5, ncclFloat16 = 6, ncclHalf = 6, ncclFloat32 = 7,
  ncclFloat = 7, ncclFloat64 = 8, ncclDouble = 8, ncclBfloat16 = 9
} ncclDataType_t;

typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4 } ncclRedOp_t;

typedef struct { char internal[128]; } ncclUniqueId;

struct ncclComm {
  MPI_Comm mpi = MPI_COMM_NULL;
  int rank = 0, size = 1;
  pf_emu::Ordered order;
};
typedef ncclComm* ncclComm_t;
#define NCCL_SPLIT_NOCOLOR -1

inline const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclInvalidArgument: return "invalid argument";
    case ncclInvalidUsage: return "invalid usage";
    default: return "internal error";
  }
}

inline ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  std::memset(id, 0, sizeof *id);
  uint32_t color = std::random_device{}() & 0x7fffffffu;
  std::memcpy(id->internal, &color, sizeof color);
  return ncclSuccess;
}

inline ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  uint32_t color;
  std::memcpy(&color, id.internal, sizeof color);
  auto made = std::make_unique<ncclComm>();
  MPI_Comm_split(MPI_COMM_WORLD, static_cast<int>(color), rank, &made->mpi);
  MPI_Comm_rank(made->mpi, &made->rank);
  MPI_Comm_size(made->mpi, &made->size);
  if (made->size != nranks || made->rank != rank) return ncclInvalidArgument;
  *comm = made.release();
  return ncclSuccess;
}

inline ncclResult_t ncclCommSplit(ncclComm_t parent, int color, int key, ncclComm_t* out,
                                  void* /*config*/) {
  MPI_Comm mpi;
  MPI_Comm_split(parent->mpi, color == NCCL_SPLIT_NOCOLOR ? MPI_UNDEFINED : color, key, &mpi);
  if (mpi == MPI_COMM_NULL) {
    *out = nullptr;
    return ncclSuccess;
  }
  auto made = std::make_unique<ncclComm>();
  made->mpi = mpi;
  MPI_Comm_rank(mpi, &made->rank);
  MPI_Comm_size(mpi, &made->size);
  *out = made.release();
  return ncclSuccess;
}

inline ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (!comm) return ncclSuccess;
  pf_emu::drain_all();
  MPI_Comm_free(&comm->mpi);
  delete comm;
  return ncclSuccess;
}
inline ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  *count = comm->size;
  return ncclSuccess;
}
inline ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  *rank = comm->rank;
  return ncclSuccess;
}

namespace parafuse::ccn::emulated {

inline size_t nccl_size_of(ncclDataType_t type) {
  switch (type) {
    case ncclInt8: case ncclUint8: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    default: return 8;
  }
}

template <typename T> T combine(T a, T b, ncclRedOp_t op) {
  using C = std::conditional_t<(sizeof(T) < 4 && !std::is_integral_v<T>), float, T>;
  C x = static_cast<C>(a), y = static_cast<C>(b);
  switch (op) {
    case ncclProd: return static_cast<T>(x * y);
    case ncclMax: return static_cast<T>(x > y ? x : y);
    case ncclMin: return static_cast<T>(x < y ? x : y);
    default: return static_cast<T>(x + y);
  }
}

// out[k] = op over ranks r (in order) of all[r * stride + k], for k < count.
template <typename T>
void reduce_ranks(const char* all, size_t stride_elems, int ranks, size_t count,
                  ncclRedOp_t op, void* out) {
  const T* in = reinterpret_cast<const T*>(all);
  T* target = static_cast<T*>(out);
  for (size_t k = 0; k < count; ++k) {
    T acc = in[k];
    for (int r = 1; r < ranks; ++r) acc = combine(acc, in[r * stride_elems + k], op);
    if (op == ncclAvg) {
      using C = std::conditional_t<(sizeof(T) < 4 && !std::is_integral_v<T>), float, T>;
      acc = static_cast<T>(static_cast<C>(acc) / static_cast<C>(ranks));
    }
    target[k] = acc;
  }
}

inline void reduce_typed(ncclDataType_t type, const char* all, size_t stride, int ranks,
                         size_t count, ncclRedOp_t op, void* out) {
  switch (type) {
    case ncclInt8: return reduce_ranks<int8_t>(all, stride, ranks, count, op, out);
    case ncclUint8: return reduce_ranks<uint8_t>(all, stride, ranks, count, op, out);
    case ncclInt32: return reduce_ranks<int32_t>(all, stride, ranks, count, op, out);
    case ncclUint32: return reduce_ranks<uint32_t>(all, stride, ranks, count, op, out);
    case ncclInt64: return reduce_ranks<int64_t>(all, stride, ranks, count, op, out);
    case ncclUint64: return reduce_ranks<uint64_t>(all, stride, ranks, count, op, out);
    case ncclFloat16: return reduce_ranks<__half>(all, stride, ranks, count, op, out);
    case ncclBfloat16: return reduce_ranks<__nv_bfloat16>(all, stride, ranks, count, op, out);
    case ncclFloat32: return reduce_ranks<float>(all, stride, ranks, count, op, out);
    case ncclFloat64: return reduce_ranks<double>(all, stride, ranks, count, op, out);
  }
}

// Every rank's `bytes` at `send`, concatenated in rank order.
inline std::vector<char> gather_all(const void* send, size_t bytes, ncclComm_t comm) {
  std::vector<char> mine(static_cast<const char*>(send), static_cast<const char*>(send) + bytes);
  std::vector<char> all(bytes * comm->size);
  MPI_Allgather(mine.data(), static_cast<int>(bytes), MPI_BYTE, all.data(),
                static_cast<int>(bytes), MPI_BYTE, comm->mpi);
  return all;
}

inline ncclResult_t queue_collective(ncclComm_t comm, cudaStream_t stream,
                                     std::function<void()> run) {
  if (!comm) return ncclInvalidArgument;
  enqueue(stream, std::move(run), {}, &comm->order);
  return ncclSuccess;
}

}  // namespace parafuse::ccn::emulated

inline ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count,
                                  ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                                  cudaStream_t stream) {
  size_t bytes = count * pf_emu::nccl_size_of(type);
  pf_emu::require_device(send, bytes, "ncclAllReduce send buffer");
  pf_emu::require_device(recv, bytes, "ncclAllReduce receive buffer");
  return pf_emu::queue_collective(comm, stream, [=] {
    std::vector<char> all = pf_emu::gather_all(send, bytes, comm);
    pf_emu::reduce_typed(type, all.data(), count, comm->size, count, op, recv);
  });
}

inline ncclResult_t ncclReduceScatter(const void* send, void* recv, size_t recvcount,
                                      ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                                      cudaStream_t stream) {
  size_t item = pf_emu::nccl_size_of(type), bytes = recvcount * item;
  pf_emu::require_device(send, bytes * (comm ? comm->size : 1), "ncclReduceScatter send buffer");
  pf_emu::require_device(recv, bytes, "ncclReduceScatter receive buffer");
  return pf_emu::queue_collective(comm, stream, [=] {
    std::vector<char> all = pf_emu::gather_all(send, bytes * comm->size, comm);
    pf_emu::reduce_typed(type, all.data() + comm->rank * bytes, recvcount * comm->size,
                         comm->size, recvcount, op, recv);
  });
}

inline ncclResult_t ncclAllGather(const void* send, void* recv, size_t sendcount,
                                  ncclDataType_t type, ncclComm_t comm, cudaStream_t stream) {
  size_t bytes = sendcount * pf_emu::nccl_size_of(type);
  pf_emu::require_device(send, bytes, "ncclAllGather send buffer");
  pf_emu::require_device(recv, bytes * (comm ? comm->size : 1), "ncclAllGather receive buffer");
  return pf_emu::queue_collective(comm, stream, [=] {
    std::vector<char> all = pf_emu::gather_all(send, bytes, comm);
    std::memcpy(recv, all.data(), all.size());
  });
}

inline ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count,
                                  ncclDataType_t type, int root, ncclComm_t comm,
                                  cudaStream_t stream) {
  size_t bytes = count * pf_emu::nccl_size_of(type);
  if (comm && comm->rank == root) pf_emu::require_device(send, bytes, "ncclBroadcast send buffer");
  pf_emu::require_device(recv, bytes, "ncclBroadcast receive buffer");
  return pf_emu::queue_collective(comm, stream, [=] {
    std::vector<char> data(bytes);
    if (comm->rank == root) std::memcpy(data.data(), send, bytes);
    MPI_Bcast(data.data(), static_cast<int>(bytes), MPI_BYTE, root, comm->mpi);
    std::memcpy(recv, data.data(), bytes);
  });
}

// ---- point to point: ncclSend/ncclRecv between ncclGroupStart and ncclGroupEnd ----------
namespace parafuse::ccn::emulated {
struct PointToPoint {
  bool send;
  void* buffer;
  size_t bytes;
  int peer;
  ncclComm_t comm;
  cudaStream_t stream;
};
inline std::vector<PointToPoint>& group() {
  static std::vector<PointToPoint> pending;
  return pending;
}
inline int& group_depth() {
  static int depth = 0;
  return depth;
}

// One queued operation per stream of the group: its sends and receives, then a wait.
inline void flush_group() {
  std::vector<PointToPoint> all = std::move(group());
  group().clear();
  while (!all.empty()) {
    cudaStream_t stream = all.front().stream;
    ncclComm_t comm = all.front().comm;
    std::vector<PointToPoint> mine, rest;
    for (const PointToPoint& p : all) (p.stream == stream && p.comm == comm ? mine : rest).push_back(p);
    all = std::move(rest);
    enqueue(stream, [mine, comm] {
      std::vector<MPI_Request> requests(mine.size());
      std::vector<std::vector<char>> copies(mine.size());
      for (size_t k = 0; k < mine.size(); ++k) {
        const PointToPoint& p = mine[k];
        if (p.send) {
          copies[k].assign(static_cast<char*>(p.buffer), static_cast<char*>(p.buffer) + p.bytes);
          MPI_Isend(copies[k].data(), static_cast<int>(p.bytes), MPI_BYTE, p.peer, 0, comm->mpi,
                    &requests[k]);
        } else {  // into host memory: MPI may write with the kernel's help, which no fault opens
          copies[k].resize(p.bytes);
          MPI_Irecv(copies[k].data(), static_cast<int>(p.bytes), MPI_BYTE, p.peer, 0, comm->mpi,
                    &requests[k]);
        }
      }
      MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
      for (size_t k = 0; k < mine.size(); ++k) {
        if (!mine[k].send && mine[k].bytes) std::memcpy(mine[k].buffer, copies[k].data(), mine[k].bytes);
      }
    }, {}, &comm->order);
  }
}

inline ncclResult_t point_to_point(bool send, const void* buffer, size_t count,
                                   ncclDataType_t type, int peer, ncclComm_t comm,
                                   cudaStream_t stream) {
  size_t bytes = count * nccl_size_of(type);
  if (!comm || peer < 0 || peer >= comm->size) return ncclInvalidArgument;
  require_device(buffer, bytes, send ? "ncclSend buffer" : "ncclRecv buffer");
  group().push_back({send, const_cast<void*>(buffer), bytes, peer, comm, stream});
  if (group_depth() == 0) flush_group();
  return ncclSuccess;
}
}  // namespace parafuse::ccn::emulated

inline ncclResult_t ncclGroupStart() {
  ++pf_emu::group_depth();
  return ncclSuccess;
}
inline ncclResult_t ncclGroupEnd() {
  if (pf_emu::group_depth() == 0) return ncclInvalidUsage;
  if (--pf_emu::group_depth() == 0) pf_emu::flush_group();
  return ncclSuccess;
}
inline ncclResult_t ncclSend(const void* send, size_t count, ncclDataType_t type, int peer,
                             ncclComm_t comm, cudaStream_t stream) {
  return pf_emu::point_to_point(true, send, count, type, peer, comm, stream);
}
inline ncclResult_t ncclRecv(void* recv, size_t count, ncclDataType_t type, int peer,
                             ncclComm_t comm, cudaStream_t stream) {
  return pf_emu::point_to_point(false, recv, count, type, peer, comm, stream);
}
