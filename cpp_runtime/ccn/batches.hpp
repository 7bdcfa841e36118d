// The batches of a batched matmul a[..., M, K] x b[..., K, N] -> out[..., M, N]: for each
// batch of the result's block, where its matrices start in the blocks of a, b and out.
// Batch dims align right; an operand with fewer batch dims is read for every batch, a batch
// dim of extent 1 at every index of the result's (torch's broadcast), and an operand that
// holds every batch where the result holds some is read at the result's.
#pragma once
#include "ccn/namespace.hpp"
#include <cstdint>
#include <vector>

#include "ccn/program.hpp"

namespace parafuse::ccn {

struct BatchOffsets {
  int64_t a, b, out;  // element offsets of one batch's matrices
};

namespace detail {

// The offset of the matrix at the result's batch coordinates `at` (global) in `operand`'s
// block (a pf::Local, or the CUDA backend's pf::DevLocal: dims_of says how many dims).
template <typename Block>
int64_t batch_offset(const Block& operand, const std::vector<int64_t>& at) {
  const size_t dims = dims_of(operand), batch = dims - 2, skip = at.size() - batch;
  int64_t index = 0;
  for (size_t d = 0; d < batch; ++d) {
    const int64_t coordinate = operand.logical[d] == 1 ? 0 : at[skip + d] - operand.start[d];
    index = index * operand.shape[d] + coordinate;
  }
  return index * operand.shape[dims - 2] * operand.shape[dims - 1];
}

}  // namespace detail

template <typename Block>
std::vector<BatchOffsets> batch_offsets(const Block& out, const Block& a, const Block& b) {
  const size_t batch = dims_of(out) - 2;
  int64_t count = 1;
  for (size_t d = 0; d < batch; ++d) count *= out.shape[d];
  std::vector<BatchOffsets> offsets;
  offsets.reserve(static_cast<size_t>(count));
  std::vector<int64_t> at(batch);
  for (int64_t i = 0; i < count; ++i) {
    for (size_t d = batch, rest = static_cast<size_t>(i); d-- > 0;) {
      at[d] = out.start[d] + static_cast<int64_t>(rest % out.shape[d]);
      rest /= out.shape[d];
    }
    offsets.push_back({detail::batch_offset(a, at), detail::batch_offset(b, at),
                       i * out.shape[batch] * out.shape[batch + 1]});
  }
  return offsets;
}

}  // namespace parafuse::ccn
