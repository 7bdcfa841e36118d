// Host-side layout of the CUDA backend's pipelined fused collectives (no CUDA here, so
// that it is tested on machines without a GPU): the ChunkPlan of ccn/chunk_plan.hpp, with each
// chunk's pieces padded to the largest one, since NCCL reduces and gathers equal counts.
// In a padded buffer, chunk c starts at offset[c] and rank r's piece of it at
// offset[c] + r * piece[c]. Where chunk c needs no padding and its pieces already lie
// next to each other in the whole tensor (one rank; or one chunk of equal blocks), the
// collectives work on the tensor's memory itself (in_whole[c]) and need no copies.
#pragma once
#include "ccn/namespace.hpp"
#include <algorithm>
#include <cstdint>
#include <vector>

#include "ccn/chunk_plan.hpp"

namespace parafuse::ccn {

struct PaddedChunks {
  ChunkPlan plan;
  std::vector<int64_t> piece;   // [chunk]: the largest piece of chunk c, in elements (>= 1)
  std::vector<int64_t> offset;  // [chunk]: start of chunk c in a padded buffer
  std::vector<char> padded;     // [chunk]: some rank's piece is shorter than piece[c]
  std::vector<char> in_whole;   // [chunk]: no padding, and piece r at whole_displs[c][0] + r * piece[c]
  int64_t total = 0;            // elements of a padded buffer (every chunk, every rank)

  PaddedChunks(int64_t rows, int64_t row_elems, int parts, int chunks)
      : plan(rows, row_elems, parts, chunks) {
    for (int c = 0; c < chunks; ++c) {
      int64_t largest = *std::max_element(plan.counts[c].begin(), plan.counts[c].end());
      piece.push_back(std::max<int64_t>(largest, 1));
      offset.push_back(total);
      total += piece.back() * parts;
      bool short_piece = false, next_to_each_other = true;
      for (int r = 0; r < parts; ++r) {
        short_piece = short_piece || plan.counts[c][r] < piece[c];
        next_to_each_other = next_to_each_other &&
                             plan.whole_displs[c][r] == plan.whole_displs[c][0] + r * piece[c];
      }
      padded.push_back(short_piece);
      in_whole.push_back(!short_piece && next_to_each_other);
    }
  }

  // Elements of each padded buffer the collectives need: none where every chunk is in_whole.
  int64_t scratch() const {
    for (char c : in_whole) {
      if (!c) return total;
    }
    return 0;
  }

  // Rank r's piece c of `whole` (a rank's whole tensor) into its padded slot of chunk c
  // of `packed` (the reduce-scatter input; the padding is the caller's, zeros).
  template <typename T, typename Copy>
  void pack(const T* whole, T* packed, int c, Copy copy) const {
    for (int r = 0; r < plan.parts; ++r) {
      copy(whole + plan.whole_displs[c][r], packed + offset[c] + r * piece[c], plan.counts[c][r]);
    }
  }

  // The inverse: rank r's padded slot of chunk c of `gathered` into its place in `whole`.
  template <typename T, typename Copy>
  void unpack(const T* gathered, T* whole, int c, Copy copy) const {
    for (int r = 0; r < plan.parts; ++r) {
      copy(gathered + offset[c] + r * piece[c], whole + plan.whole_displs[c][r], plan.counts[c][r]);
    }
  }
};

}  // namespace parafuse::ccn
