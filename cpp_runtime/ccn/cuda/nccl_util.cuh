// NCCL for generated .ccn programs: every call checked, the bootstrap (rank 0's
// ncclUniqueId broadcast by MPI, the device picked from the node-local rank,
// communicators split per group), and the collectives of docs/ccn-language.md section 7 on a stream, with
// uneven blocks padded internally to NCCL's equal counts.
#pragma once
#include "ccn/namespace.hpp"
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "ccn/cuda/check.cuh"
#include "ccn/cuda/device_memory.cuh"
#include "ccn/cuda/launch.cuh"
#include "ccn/half.hpp"
#include "ccn/mpi_util.hpp"

#define PF_NCCL(call)                                                              \
  do {                                                                             \
    ncclResult_t pf_status_ = (call);                                              \
    if (pf_status_ != ncclSuccess) {                                               \
      pf::device_failed(#call, __FILE__, __LINE__, ncclGetErrorString(pf_status_)); \
    }                                                                              \
  } while (0)

namespace parafuse::ccn {

template <typename T> ncclDataType_t nccl_type();
template <> inline ncclDataType_t nccl_type<float>() { return ncclFloat32; }
template <> inline ncclDataType_t nccl_type<double>() { return ncclFloat64; }
template <> inline ncclDataType_t nccl_type<int32_t>() { return ncclInt32; }
template <> inline ncclDataType_t nccl_type<int64_t>() { return ncclInt64; }
template <> inline ncclDataType_t nccl_type<uint8_t>() { return ncclUint8; }
template <> inline ncclDataType_t nccl_type<f16>() { return ncclFloat16; }
template <> inline ncclDataType_t nccl_type<bf16>() { return ncclBfloat16; }

inline ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return ncclSum;
    case ReduceOp::prod: return ncclProd;
    case ReduceOp::max: return ncclMax;
    case ReduceOp::min: return ncclMin;
    default: return ncclAvg;
  }
}

// Pick this rank's device from its rank among the ranks of its node.
inline int select_device(MPI_Comm comm) {
  MPI_Comm node;
  PF_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int local = comm_rank(node);
  PF_MPI(MPI_Comm_free(&node));
  int devices = 0;
  cudaError_t found = cudaGetDeviceCount(&devices);  // an exception, not an abort: the
  if (found != cudaSuccess || devices == 0) {          // Python module reports it
    throw std::runtime_error(std::string("no CUDA device (") +
                             (found != cudaSuccess ? cudaGetErrorString(found) : "none") + ")");
  }
  const int device = local % devices;
  PF_CUDA(cudaSetDevice(device));
  // The Python module's results come from the device's default pool (cudaMallocAsync):
  // keep freed memory there instead of releasing it at every synchronisation.
  cudaMemPool_t pool;
  PF_CUDA(cudaDeviceGetDefaultMemPool(&pool, device));
  uint64_t keep = UINT64_MAX;
  PF_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  return device;
}

// The NCCL communicator of the ranks of `comm` (collective over `comm`).
inline ncclComm_t nccl_comm(MPI_Comm comm) {
  ncclUniqueId id;
  if (comm_rank(comm) == 0) PF_NCCL(ncclGetUniqueId(&id));
  PF_MPI(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm));
  ncclComm_t out;
  PF_NCCL(ncclCommInitRank(&out, comm_size(comm), id, comm_rank(comm)));
  return out;
}

// A sub-communicator of `parent`: ranks with the same color, ordered by key.
inline ncclComm_t nccl_split(ncclComm_t parent, int color, int key) {
  ncclComm_t out;
  PF_NCCL(ncclCommSplit(parent, color, key, &out, nullptr));
  return out;
}

inline int nccl_size(ncclComm_t comm) {
  int n = 0;
  PF_NCCL(ncclCommCount(comm, &n));
  return n;
}
inline int nccl_rank(ncclComm_t comm) {
  int r = 0;
  PF_NCCL(ncclCommUserRank(comm, &r));
  return r;
}

template <typename T> void copy(const T* in, T* out, int64_t count, cudaStream_t stream) {
  if (count > 0 && in != out) {
    PF_CUDA(cudaMemcpyAsync(out, in, sizeof(T) * count, cudaMemcpyDeviceToDevice, stream));
  }
}

template <typename T> void allreduce(const T* in, T* out, int64_t count, ReduceOp op,
                                     ncclComm_t comm, cudaStream_t stream) {
  PF_NCCL(ncclAllReduce(in, out, count, nccl_type<T>(), nccl_op(op), comm, stream));
}

// A scratch buffer that grows and is reused by the padded collectives of one schedule.
struct Scratch {
  DeviceBuffer<char> a, b;
  template <typename T> T* first(int64_t count) { return grow<T>(a, count); }
  template <typename T> T* second(int64_t count) { return grow<T>(b, count); }
  template <typename T> static T* grow(DeviceBuffer<char>& buf, int64_t count) {
    int64_t bytes = static_cast<int64_t>(sizeof(T)) * count;
    if (buf.size() < bytes) buf.resize(bytes);
    return reinterpret_cast<T*>(buf.data());
  }
};

// Reduce-scatter along dim 0 of `rows` rows of `row_elems`: rank r gets rows
// [r*b, min((r+1)*b, rows)), b = ceil(rows/parts). The input is padded to parts*b rows
// (zeros after the last row), so NCCL's equal blocks line up with the split rule.
template <typename T>
void reduce_scatter(const T* in, T* out, int64_t rows, int64_t row_elems, ReduceOp op,
                    ncclComm_t comm, cudaStream_t stream, Scratch& scratch) {
  int parts = nccl_size(comm), rank = nccl_rank(comm);
  int64_t b = (rows + parts - 1) / parts, block = b * row_elems;
  if (rows % parts == 0) {
    PF_NCCL(ncclReduceScatter(in, out, block, nccl_type<T>(), nccl_op(op), comm, stream));
    return;
  }
  T* padded = scratch.first<T>(parts * block);
  T* mine = scratch.second<T>(block);
  copy(in, padded, rows * row_elems, stream);
  PF_CUDA(cudaMemsetAsync(padded + rows * row_elems, 0,
                          sizeof(T) * (parts * block - rows * row_elems), stream));
  PF_NCCL(ncclReduceScatter(padded, mine, block, nccl_type<T>(), nccl_op(op), comm, stream));
  int64_t start = std::min<int64_t>(rank * b, rows), stop = std::min<int64_t>(start + b, rows);
  copy(mine, out, (stop - start) * row_elems, stream);
}

// Allgather of dim-0 blocks (the split rule's uneven blocks), padded to equal blocks.
template <typename T>
void allgather_rows(const T* in, T* out, int64_t rows, int64_t row_elems, ncclComm_t comm,
                    cudaStream_t stream, Scratch& scratch) {
  int parts = nccl_size(comm), rank = nccl_rank(comm);
  int64_t b = (rows + parts - 1) / parts, block = b * row_elems;
  if (rows % parts == 0) {
    PF_NCCL(ncclAllGather(in, out, block, nccl_type<T>(), comm, stream));
    return;
  }
  int64_t start = std::min<int64_t>(rank * b, rows), stop = std::min<int64_t>(start + b, rows);
  T* mine = scratch.first<T>(block);
  T* padded = scratch.second<T>(parts * block);
  copy(in, mine, (stop - start) * row_elems, stream);
  PF_NCCL(ncclAllGather(mine, padded, block, nccl_type<T>(), comm, stream));
  copy(padded, out, rows * row_elems, stream);
}

template <typename T>
__global__ void gather_dim_kernel(const T* padded, T* out, int64_t outer, int64_t extent,
                                  int64_t b, int64_t inner, int64_t total) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t k = i % inner, rest = i / inner, j = rest % extent, o = rest / extent;
    int64_t part = j / b, within = j % b;
    out[i] = padded[((part * outer + o) * b + within) * inner + k];
  }
}

// Allgather of blocks along a dim other than 0: outer x block x inner per rank.
template <typename T>
void allgather_dim(const T* in, T* out, int64_t outer, int64_t extent, int64_t inner,
                   ncclComm_t comm, cudaStream_t stream, Scratch& scratch) {
  int parts = nccl_size(comm), rank = nccl_rank(comm);
  int64_t b = (extent + parts - 1) / parts;
  int64_t start = std::min<int64_t>(rank * b, extent), stop = std::min<int64_t>(start + b, extent);
  T* mine = scratch.first<T>(outer * b * inner);
  T* padded = scratch.second<T>(parts * outer * b * inner);
  PF_CUDA(cudaMemsetAsync(mine, 0, sizeof(T) * outer * b * inner, stream));
  if (stop > start) {
    PF_CUDA(cudaMemcpy2DAsync(mine, sizeof(T) * b * inner, in, sizeof(T) * (stop - start) * inner,
                              sizeof(T) * (stop - start) * inner, outer, cudaMemcpyDeviceToDevice,
                              stream));
  }
  PF_NCCL(ncclAllGather(mine, padded, outer * b * inner, nccl_type<T>(), comm, stream));
  int64_t total = outer * extent * inner;
  if (total == 0) return;
  PF_LAUNCH(gather_dim_kernel, grid_for(total), stream, padded, out, outer, extent, b, inner,
            total);
  PF_CUDA(cudaGetLastError());
}

template <typename T> void broadcast(const T* in, T* out, int64_t count, int root,
                                     ncclComm_t comm, cudaStream_t stream) {
  PF_NCCL(ncclBroadcast(in, out, count, nccl_type<T>(), root, comm, stream));
}

// send(x, G, SHIFT): rank i of block b receives from rank i of block (b - SHIFT) mod K,
// as one group of ncclSend/ncclRecv on the world communicator.
template <typename T>
void send_shift(const T* in, T* out, int64_t count, int blocks, int shift, ncclComm_t world,
                cudaStream_t stream) {
  int ranks = nccl_size(world), rank = nccl_rank(world), parts = ranks / blocks;
  int block = rank / parts, index = rank % parts;
  int s = ((shift % blocks) + blocks) % blocks;
  if (s == 0) {
    copy(in, out, count, stream);
    return;
  }
  int to = ((block + s) % blocks) * parts + index;
  int from = ((block - s + blocks) % blocks) * parts + index;
  PF_NCCL(ncclGroupStart());
  PF_NCCL(ncclSend(in, count, nccl_type<T>(), to, world, stream));
  PF_NCCL(ncclRecv(out, count, nccl_type<T>(), from, world, stream));
  PF_NCCL(ncclGroupEnd());
}

// A send between pipeline stages: rank i of block `from` sends `count` elements to rank i of
// block `to`, which receives them (a rank of both, where from == to, copies them).
template <typename T>
void send_between(const T* in, T* out, int64_t count, int blocks, int from, int to,
                  ncclComm_t world, cudaStream_t stream) {
  int parts = nccl_size(world) / blocks, rank = nccl_rank(world);
  int block = rank / parts, index = rank % parts;
  if (from == to) {
    copy(in, out, count, stream);
  } else if (block == from) {
    PF_NCCL(ncclSend(in, count, nccl_type<T>(), to * parts + index, world, stream));
  } else if (block == to) {
    PF_NCCL(ncclRecv(out, count, nccl_type<T>(), from * parts + index, world, stream));
  }
}

}  // namespace parafuse::ccn
