// MPI for generated .ccn programs: every call checked (the failing call and the
// generated source line are reported, then every rank aborts), datatypes and
// user-defined reduction operators for f16/bf16 (reduced in float), and the
// collectives of docs/ccn-language.md section 7 on blocks of uneven size.
#pragma once
#include "ccn/namespace.hpp"
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <vector>

#include "ccn/half.hpp"
#include "ccn/math.hpp"

#define PF_MPI(call)                                                                   \
  do {                                                                                 \
    int pf_status_ = (call);                                                           \
    if (pf_status_ != MPI_SUCCESS) pf::mpi_failed(#call, __FILE__, __LINE__, pf_status_); \
  } while (0)

namespace parafuse::ccn {

[[noreturn]] inline void mpi_failed(const char* call, const char* file, int line, int status) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  std::fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, call, text);
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::abort();
}

enum class ReduceOp { sum, prod, max, min, avg };

template <typename T> MPI_Datatype mpi_type();
template <> inline MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <> inline MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }
template <> inline MPI_Datatype mpi_type<int32_t>() { return MPI_INT32_T; }
template <> inline MPI_Datatype mpi_type<int64_t>() { return MPI_INT64_T; }
template <> inline MPI_Datatype mpi_type<uint8_t>() { return MPI_UINT8_T; }
template <> inline MPI_Datatype mpi_type<f16>() { return MPI_UINT16_T; }
template <> inline MPI_Datatype mpi_type<bf16>() { return MPI_UINT16_T; }

template <typename T, ReduceOp Op>
void reduce_half(void* in, void* inout, int* count, MPI_Datatype*) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (int i = 0; i < *count; ++i) {
    float x = static_cast<float>(a[i]), y = static_cast<float>(b[i]);
    float r = Op == ReduceOp::prod ? x * y
              : Op == ReduceOp::max ? maximum(x, y)
              : Op == ReduceOp::min ? minimum(x, y) : x + y;
    b[i] = store_as<T>(r);
  }
}

template <typename T> MPI_Op mpi_op(ReduceOp op) {
  if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>) {
    static MPI_Op ops[4] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};
    int index = op == ReduceOp::prod ? 1 : op == ReduceOp::max ? 2 : op == ReduceOp::min ? 3 : 0;
    if (ops[index] == MPI_OP_NULL) {
      MPI_User_function* fn = index == 1 ? reduce_half<T, ReduceOp::prod>
                              : index == 2 ? reduce_half<T, ReduceOp::max>
                              : index == 3 ? reduce_half<T, ReduceOp::min>
                                           : reduce_half<T, ReduceOp::sum>;
      PF_MPI(MPI_Op_create(fn, 1, &ops[index]));
    }
    return ops[index];
  } else {
    switch (op) {
      case ReduceOp::prod: return MPI_PROD;
      case ReduceOp::max: return MPI_MAX;
      case ReduceOp::min: return MPI_MIN;
      default: return MPI_SUM;
    }
  }
}

inline int comm_size(MPI_Comm comm) {
  int size = 1;
  PF_MPI(MPI_Comm_size(comm, &size));
  return size;
}

inline int comm_rank(MPI_Comm comm) {
  int rank = 0;
  PF_MPI(MPI_Comm_rank(comm, &rank));
  return rank;
}

// avg = sum / (number of contributions), rounded to T.
template <typename T> void divide_by(T* data, int64_t count, int contributions) {
  using C = compute_t<T>;
  for (int64_t i = 0; i < count; ++i) {
    data[i] = store_as<T>(static_cast<C>(data[i]) / static_cast<C>(contributions));
  }
}

template <typename T>
void allreduce(const T* in, T* out, int64_t count, ReduceOp op, MPI_Comm comm) {
  PF_MPI(MPI_Allreduce(in == out ? MPI_IN_PLACE : in, out, static_cast<int>(count),
                       mpi_type<T>(), mpi_op<T>(op), comm));
  if (op == ReduceOp::avg) divide_by(out, count, comm_size(comm));
}

// Counts (in elements) of each rank's block of a dim of `rows` rows of `row_elems`.
inline std::vector<int> block_counts(int64_t rows, int64_t row_elems, int parts) {
  std::vector<int> counts(parts);
  int64_t b = parts ? (rows + parts - 1) / parts : rows;
  for (int r = 0; r < parts; ++r) {
    int64_t start = std::min<int64_t>(r * b, rows), stop = std::min<int64_t>(start + b, rows);
    counts[r] = static_cast<int>((stop - start) * row_elems);
  }
  return counts;
}

inline std::vector<int> displacements(const std::vector<int>& counts) {
  std::vector<int> displs(counts.size(), 0);
  for (size_t r = 1; r < counts.size(); ++r) displs[r] = displs[r - 1] + counts[r - 1];
  return displs;
}

template <typename T>
void reduce_scatter(const T* in, T* out, int64_t rows, int64_t row_elems, ReduceOp op,
                    MPI_Comm comm) {
  std::vector<int> counts = block_counts(rows, row_elems, comm_size(comm));
  PF_MPI(MPI_Reduce_scatter(in, out, counts.data(), mpi_type<T>(), mpi_op<T>(op), comm));
  if (op == ReduceOp::avg) divide_by(out, counts[comm_rank(comm)], comm_size(comm));
}

// Gather blocks split along dim 0 of (rows x row_elems) into the whole tensor.
template <typename T>
void allgather_rows(const T* in, T* out, int64_t rows, int64_t row_elems, MPI_Comm comm) {
  std::vector<int> counts = block_counts(rows, row_elems, comm_size(comm));
  std::vector<int> displs = displacements(counts);
  PF_MPI(MPI_Allgatherv(in, counts[comm_rank(comm)], mpi_type<T>(), out, counts.data(),
                        displs.data(), mpi_type<T>(), comm));
}

// Gather blocks split along a middle dim: outer x (dim) x inner, blocks of dim per rank.
template <typename T>
void allgather_dim(const T* in, T* out, int64_t outer, int64_t dim, int64_t inner,
                   MPI_Comm comm) {
  int parts = comm_size(comm);
  std::vector<int> widths = block_counts(dim, 1, parts);
  std::vector<int> counts(parts), starts = displacements(widths);
  for (int r = 0; r < parts; ++r) counts[r] = static_cast<int>(outer * widths[r] * inner);
  std::vector<int> displs = displacements(counts);
  std::vector<T> packed(static_cast<size_t>(outer * dim * inner));
  PF_MPI(MPI_Allgatherv(in, counts[comm_rank(comm)], mpi_type<T>(), packed.data(), counts.data(),
                        displs.data(), mpi_type<T>(), comm));
  for (int r = 0; r < parts; ++r) {
    const T* block = packed.data() + displs[r];
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t d = 0; d < widths[r]; ++d) {
        const T* src = block + (o * widths[r] + d) * inner;
        T* dst = out + (o * dim + starts[r] + d) * inner;
        std::copy(src, src + inner, dst);
      }
    }
  }
}

template <typename T>
void broadcast(const T* in, T* out, int64_t count, int root, MPI_Comm comm) {
  if (in != out) std::copy(in, in + count, out);
  PF_MPI(MPI_Bcast(out, static_cast<int>(count), mpi_type<T>(), root, comm));
}

// send(x, G, shift): world rank r receives from the rank `shift` blocks before it.
template <typename T>
void send_shift(const T* in, T* out, int64_t count, int blocks, int shift, MPI_Comm world) {
  int ranks = comm_size(world), rank = comm_rank(world), block_size = ranks / blocks;
  int s = ((shift % blocks) + blocks) % blocks;
  if (s == 0) {
    std::copy(in, in + count, out);
    return;
  }
  int dest = (rank + s * block_size) % ranks;
  int source = (rank - s * block_size + ranks) % ranks;
  PF_MPI(MPI_Sendrecv(in, static_cast<int>(count), mpi_type<T>(), dest, 17, out,
                      static_cast<int>(count), mpi_type<T>(), source, 17, world,
                      MPI_STATUS_IGNORE));
}

// A send between pipeline stages: rank i of block `from` sends `count` elements to rank i of
// block `to`, which receives them (a rank of both, where from == to, copies them).
template <typename T>
void send_between(const T* in, T* out, int64_t count, int blocks, int from, int to,
                  MPI_Comm world) {
  int parts = comm_size(world) / blocks, rank = comm_rank(world);
  int block = rank / parts, index = rank % parts;
  if (from == to) {
    std::copy(in, in + count, out);
  } else if (block == from) {
    PF_MPI(MPI_Send(in, static_cast<int>(count), mpi_type<T>(), to * parts + index, 18, world));
  } else if (block == to) {
    PF_MPI(MPI_Recv(out, static_cast<int>(count), mpi_type<T>(), from * parts + index, 18, world,
                    MPI_STATUS_IGNORE));
  }
}

}  // namespace parafuse::ccn
