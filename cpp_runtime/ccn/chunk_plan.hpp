// Chunk plans of the pipelined fused collectives and overlapped stages (both backends):
// which rows of which rank's block form chunk c, and the per-rank counts and
// displacements of each chunk.
#pragma once
#include "ccn/namespace.hpp"
#include <algorithm>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

namespace parafuse::ccn {

// Chunk c of a block of `rows` rows: rows [start, stop) by the block split rule.
inline std::pair<int64_t, int64_t> chunk_rows(int64_t rows, int chunks, int c) {
  int64_t b = chunks ? (rows + chunks - 1) / chunks : rows;
  int64_t start = std::min<int64_t>(c * b, rows);
  return {start, std::min<int64_t>(start + b, rows)};
}

// The MPI tag of chunk c of an overlapped stage's producer (part 0) or consumer (part 1),
// below the 32767 every MPI accepts whatever the chunk count. Tags repeat every
// kChunkTagCycle chunks, which pairs no chunk wrongly: the messages of one pair of ranks
// with one tag are received in the order they were sent, and every rank posts its
// chunks in the same order.
constexpr int kChunkTagBase = 1000, kChunkTagCycle = 15000;
static_assert(kChunkTagBase + 2 * kChunkTagCycle <= 32767, "MPI guarantees tags to 32767 only");
inline int chunk_tag(int part, int c) { return kChunkTagBase + 2 * (c % kChunkTagCycle) + part; }

// Counts (in elements) of each rank's block of `rows` rows of `row_elems`, in 64 bits.
inline std::vector<int64_t> block_sizes(int64_t rows, int64_t row_elems, int parts) {
  std::vector<int64_t> sizes(parts);
  int64_t b = parts ? (rows + parts - 1) / parts : rows;
  for (int r = 0; r < parts; ++r) {
    int64_t start = std::min<int64_t>(r * b, rows), stop = std::min<int64_t>(start + b, rows);
    sizes[r] = (stop - start) * row_elems;
  }
  return sizes;
}

// A tensor of `rows` x `row_elems` split into `parts` blocks along dim 0, each block
// cut into `chunks` pieces: piece c of every block is reduced/gathered together. Counts
// and offsets are 64-bit (a tensor of 2^31 elements fits on one GPU); MPI's int arrays
// (mpi_counts, mpi_whole_displs) exist only where every value fits in an int.
struct ChunkPlan {
  int chunks = 1, parts = 1;
  int64_t row_elems = 1;
  std::vector<int64_t> block_start, block_rows;                  // per rank, in rows
  std::vector<std::vector<int64_t>> counts, whole_displs, packed_displs;  // [chunk][rank]
  std::vector<int64_t> packed_offset;                             // [chunk], in elements
  std::vector<std::vector<int>> mpi_counts, mpi_whole_displs;     // as MPI takes them

  ChunkPlan(int64_t rows, int64_t row_elems_, int parts_, int chunks_)
      : chunks(chunks_), parts(parts_), row_elems(row_elems_) {
    std::vector<int64_t> block = block_sizes(rows, 1, parts);
    int64_t start = 0;
    for (int r = 0; r < parts; ++r) {
      block_start.push_back(start);
      block_rows.push_back(block[r]);
      start += block[r];
    }
    int64_t packed = 0;
    for (int c = 0; c < chunks; ++c) {
      std::vector<int64_t> count(parts), whole(parts), inpack(parts);
      packed_offset.push_back(packed);
      for (int r = 0; r < parts; ++r) {
        auto [lo, hi] = chunk_rows(block_rows[r], chunks, c);
        count[r] = (hi - lo) * row_elems;
        whole[r] = (block_start[r] + lo) * row_elems;
        inpack[r] = packed - packed_offset[c];
        packed += count[r];
      }
      counts.push_back(count);
      whole_displs.push_back(whole);
      packed_displs.push_back(inpack);
    }
    if (rows * row_elems <= INT_MAX) {
      for (int c = 0; c < chunks; ++c) {
        mpi_counts.emplace_back(counts[c].begin(), counts[c].end());
        mpi_whole_displs.emplace_back(whole_displs[c].begin(), whole_displs[c].end());
      }
    }
  }

  // MPI's counts and displacements of chunk c (MPI's collectives count in int).
  const std::vector<int>& mpi_counts_of(int c) const { return mpi_arrays(mpi_counts, c); }
  const std::vector<int>& mpi_whole_displs_of(int c) const {
    return mpi_arrays(mpi_whole_displs, c);
  }

  // This rank's piece c, in elements relative to its own block.
  std::pair<int64_t, int64_t> mine(int rank, int c) const {
    auto [lo, hi] = chunk_rows(block_rows[rank], chunks, c);
    return {lo * row_elems, hi * row_elems};
  }

  // Copy piece c of every rank's block of `whole` next to each other (reduce-scatter input).
  template <typename T> void pack(const T* whole, T* packed, int c) const {
    for (int r = 0; r < parts; ++r) {
      const T* from = whole + whole_displs[c][r];
      std::copy(from, from + counts[c][r], packed + packed_offset[c] + packed_displs[c][r]);
    }
  }

 private:
  static const std::vector<int>& mpi_arrays(const std::vector<std::vector<int>>& arrays, int c) {
    if (arrays.empty()) {
      throw std::overflow_error("a chunked MPI collective of 2^31 elements or more");
    }
    return arrays[c];
  }
};

// Chunks for a fused or overlapped stage of `bytes` per rank when `tune` did not fix
// them: about 4 MiB each, between 1 and 16 (measured on a 2-core machine: small chunks cost
// more in nonblocking-collective overhead than they hide).
inline int auto_chunks(int64_t bytes) {
  int64_t chunks = bytes / (4 * 1024 * 1024);
  return static_cast<int>(std::clamp<int64_t>(chunks, 1, 16));
}

}  // namespace parafuse::ccn
