// The chunk plans of the pipelined fused collectives at sizes beyond 2^32 elements: every
// count and offset in 64 bits, nothing allocated (ccn/chunk_plan.hpp, ccn/cuda/padded_chunks.hpp).
#include <cstdint>
#include <cstdio>
#include <stdexcept>

#include "ccn/cuda/padded_chunks.hpp"

namespace {

int failures = 0;

void expect(bool ok, const char* what, int64_t rows, int64_t row_elems, int parts, int chunks) {
  if (ok) return;
  std::printf("%s: rows=%lld row_elems=%lld parts=%d chunks=%d\n", what,
              static_cast<long long>(rows), static_cast<long long>(row_elems), parts, chunks);
  ++failures;
}

// Every element of every rank's block lies in exactly one piece, at the right offsets.
void check(int64_t rows, int64_t row_elems, int parts, int chunks) {
  const pf::PaddedChunks layout(rows, row_elems, parts, chunks);
  const pf::ChunkPlan& plan = layout.plan;
#define EXPECT(ok) expect((ok), #ok, rows, row_elems, parts, chunks)
  int64_t block_elems_total = 0, packed = 0, padded = 0;
  for (int r = 0; r < parts; ++r) {
    int64_t covered = 0;
    for (int c = 0; c < chunks; ++c) {
      auto [lo, hi] = plan.mine(r, c);
      EXPECT(lo == covered);
      EXPECT(hi - lo == plan.counts[c][r]);
      EXPECT(plan.whole_displs[c][r] == plan.block_start[r] * row_elems + lo);
      EXPECT(plan.counts[c][r] <= layout.piece[c]);
      covered = hi;
    }
    EXPECT(covered == plan.block_rows[r] * row_elems);
    block_elems_total += covered;
  }
  EXPECT(block_elems_total == rows * row_elems);
  for (int c = 0; c < chunks; ++c) {
    EXPECT(plan.packed_offset[c] == packed);
    for (int r = 0; r < parts; ++r) {
      EXPECT(plan.packed_displs[c][r] == packed - plan.packed_offset[c]);
      packed += plan.counts[c][r];
    }
    EXPECT(layout.offset[c] == padded);
    padded += layout.piece[c] * parts;
  }
  EXPECT(layout.total == padded && padded >= rows * row_elems);
  bool threw = false;
  try {
    plan.mpi_counts_of(0);
  } catch (const std::overflow_error&) {
    threw = true;
  }
  EXPECT(threw == (rows * row_elems > INT32_MAX));
#undef EXPECT
}

}  // namespace

int main() {
  const int64_t big = (int64_t(1) << 32) + 7;  // elements beyond 2^32
  check(big, 1, 3, 5);
  check(big, 1, 8, 16);
  check(3, (int64_t(1) << 31) + 1, 2, 3);   // rows of 2^31 + 1 elements
  check(int64_t(1) << 20, 4099, 7, 16);     // 2^32 elements and more, uneven blocks
  check(1001, 3, 4, 4);                     // small: MPI's int arrays exist
  const pf::PaddedChunks one(big, 1, 1, 1);  // one chunk of one rank: the whole tensor
  if (one.piece[0] != big || one.plan.counts[0][0] != big) ++failures;
  std::printf(failures ? "%d failures\n" : "ok\n", failures);
  return failures ? 1 : 0;
}
