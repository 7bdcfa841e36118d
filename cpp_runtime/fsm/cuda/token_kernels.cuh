// parafuse boostfsm on GPUs: the kernels of a token set. One device thread tokenizes one
// chunk: the tokens that start in its bytes [chunk_begin(c), chunk_begin(c + 1)), from its
// entry (the first token boundary in it) to its exit (where its last token ends, at or past
// the chunk's end). A chunk is right once its entry is its predecessor's exit; tokenizing
// from a position depends on that position alone, so two tokenizations that share a
// boundary are the same from there on.
//   speculate_token_chunks   each chunk's entry guessed: its `lookback` bytes before,
//                            tokenized up to the chunk; then its exit from there
//   mark_wrong_entries / rewalk_entries   a re-validation round: a chunk whose entry is not
//                            its predecessor's exit tokenizes again from that exit, beside
//                            its old tokenization until the two share a boundary
//   settle_entries           one thread, after the rounds: the chunks still wrong, in order
//   find_piece_stop          (a piece of a longer input) where the piece's tokenization
//                            ends: the first token whose scan reached the piece's end
//   count_token_chunks       each chunk from its true entry: tokens per kind (skip rules not
//                            counted) and, for the list, the chunk's tokens
//   write_token_chunks       each chunk again, writing its tokens where scan_counts put them
// `over` counts the threads that ran past their budget (token_tables.cuh).
#pragma once

#include <cstddef>
#include <cstdint>

#include "fsm/cuda/kernels.cuh"
#include "fsm/cuda/token_tables.cuh"

namespace parafuse::fsm::cuda {

// A token as the host's Token (fsm/tokens/tokenizer.hpp) lays it out: 24 bytes.
struct DeviceToken {
  uint64_t start, end;
  uint16_t kind;
};

// The exit of a chunk ending at `end` tokenized from the true entry x, whose tokenization
// from `old` ended at `exit`: both are walked, the one behind first, until they share a
// boundary (then `exit` holds) or x's passes the chunk. Each has a tokenizer of its own: the
// old one may stop at an unsure token (or its budget) where x's goes on. `over`: x's
// tokenizer ran past its budget.
__device__ inline uint64_t rewalked_exit(const DeviceTokenTables& t, const TokenInput& in,
                                         uint64_t x, uint64_t old, uint64_t end, uint64_t exit,
                                         bool& over) {
  DeviceTokenizer ahead(t, in), behind(t, in);
  int32_t kind;
  while (x < end && old != x) {
    if (old < x) old = behind.next_token(old, kind);
    else x = ahead.next_token(x, kind);
  }
  over = ahead.over();
  return x < end ? exit : x;
}

__global__ void speculate_token_chunks(DeviceTokenTables global, TokenInput in, uint64_t chunks,
                                       uint32_t lookback, uint64_t* entries, uint64_t* exits,
                                       unsigned long long* over) {
  __shared__ SharedTables shared;
  const DeviceTokenTables t = in_shared(global, shared);
  const uint64_t c = thread_index();
  if (c >= chunks) return;
  DeviceTokenizer tokenizer(t, in);
  const uint64_t begin = chunk_begin(in.n, chunks, c), end = chunk_begin(in.n, chunks, c + 1);
  const uint64_t entry = c == 0 ? 0 : tokenizer.boundary_from(begin > lookback ? begin - lookback
                                                                                 : 0, begin);
  entries[c] = entry;
  exits[c] = tokenizer.boundary_from(entry, end);
  if (tokenizer.over()) add_count(over, 1ull);
}

// `old[c]`: the entry a wrong chunk had (its exits[c] is that entry's).
__global__ void mark_wrong_entries(uint64_t chunks, uint64_t* entries, const uint64_t* exits,
                                   uint64_t* old, uint8_t* wrong,
                                   unsigned long long* wrong_count) {
  const uint64_t c = thread_index();
  if (c >= chunks) return;
  const uint64_t want = c == 0 ? 0 : exits[c - 1];
  wrong[c] = entries[c] != want;
  if (!wrong[c]) return;
  old[c] = entries[c];
  entries[c] = want;
  add_count(wrong_count, 1ull);
}

__global__ void rewalk_entries(DeviceTokenTables global, TokenInput in, uint64_t chunks,
                               const uint64_t* entries, const uint64_t* old, const uint8_t* wrong,
                               uint64_t* exits, unsigned long long* over) {
  __shared__ SharedTables shared;
  const DeviceTokenTables t = in_shared(global, shared);
  const uint64_t c = thread_index();
  if (c >= chunks || !wrong[c]) return;
  bool past_budget = false;
  exits[c] = rewalked_exit(t, in, entries[c], old[c], chunk_begin(in.n, chunks, c + 1), exits[c],
                           past_budget);
  if (past_budget) add_count(over, 1ull);
}

// `walked`: how many chunks were wrong.
__global__ void settle_entries(DeviceTokenTables t, TokenInput in, uint64_t chunks,
                               uint64_t* entries, uint64_t* exits, unsigned long long* walked,
                               unsigned long long* over) {
  if (thread_index() != 0) return;
  uint64_t truth = 0;
  bool past_budget = false;
  for (uint64_t c = 0; c < chunks; ++c) {
    if (entries[c] != truth) {
      bool chunk_over = false;
      exits[c] = rewalked_exit(t, in, truth, entries[c], chunk_begin(in.n, chunks, c + 1),
                               exits[c], chunk_over);
      past_budget = past_budget || chunk_over;
      entries[c] = truth;
      ++*walked;
    }
    truth = exits[c];
  }
  if (past_budget) add_count(over, 1ull);
}

// visit(start, end, kind) for the tokens a chunk keeps (not skip rules'), from its entry,
// that start before `end`.
template <class Visit>
__device__ inline void for_each_token(DeviceTokenizer& tokenizer, uint64_t entry, uint64_t end,
                                      Visit&& visit) {
  int32_t kind;
  for (uint64_t p = entry; p < end;) {
    const uint64_t next = tokenizer.next_token(p, kind);
    if (kind != kSkipKind && !tokenizer.over() && tokenizer.unsure() == DeviceTokenizer::kNone)
      visit(p, next, kind);
    p = next;
  }
}

// A truncated piece: `stop` lowered to the start of the first unsure token of any chunk (the
// piece ends there).
__global__ void find_piece_stop(DeviceTokenTables global, TokenInput in, uint64_t chunks,
                                const uint64_t* entries, unsigned long long* stop,
                                unsigned long long* over) {
  __shared__ SharedTables shared;
  const DeviceTokenTables t = in_shared(global, shared);
  const uint64_t c = thread_index();
  if (c >= chunks) return;
  DeviceTokenizer tokenizer(t, in);
  for_each_token(tokenizer, entries[c], chunk_begin(in.n, chunks, c + 1),
                 [](uint64_t, uint64_t, int32_t) {});
  if (tokenizer.unsure() != DeviceTokenizer::kNone) lower_to(stop, tokenizer.unsure());
  if (tokenizer.over()) add_count(over, 1ull);
}

// `counts`: [kind_count]; `token_counts` (or null): [chunks], the tokens of each that start
// before `stop`.
__global__ void count_token_chunks(DeviceTokenTables global, TokenInput in, uint64_t chunks,
                                   uint64_t stop, const uint64_t* entries,
                                   unsigned long long* counts, unsigned long long* token_counts,
                                   unsigned long long* over) {
  __shared__ SharedTables shared;
  __shared__ unsigned long long block_counts[kSharedCounts];
  const bool in_block = global.kind_count <= kSharedCounts;
  if (in_block)
    for (uint32_t k = threadIdx.x; k < global.kind_count; k += blockDim.x) block_counts[k] = 0;
  const DeviceTokenTables t = in_shared(global, shared);  // its __syncthreads covers both
  const uint64_t c = thread_index();
  if (c < chunks) {
    DeviceTokenizer tokenizer(t, in);
    unsigned long long kept = 0;
    const uint64_t end = chunk_begin(in.n, chunks, c + 1);
    for_each_token(tokenizer, entries[c], end < stop ? end : stop,
                   [&](uint64_t, uint64_t, int32_t kind) {
      add_count(in_block ? &block_counts[kind] : &counts[kind], 1ull);
      ++kept;
    });
    if (token_counts) token_counts[c] = kept;
    if (tokenizer.over()) add_count(over, 1ull);
  }
  if (in_block) {
    __syncthreads();
    for (uint32_t k = threadIdx.x; k < t.kind_count; k += blockDim.x)
      if (block_counts[k]) add_count(&counts[k], block_counts[k]);
  }
}

// Token offsets are `base` plus the offsets in the piece.
__global__ void write_token_chunks(DeviceTokenTables global, TokenInput in, uint64_t chunks,
                                   uint64_t stop, uint64_t base, const uint64_t* entries,
                                   const unsigned long long* first, DeviceToken* out) {
  __shared__ SharedTables shared;
  const DeviceTokenTables t = in_shared(global, shared);
  const uint64_t c = thread_index();
  if (c >= chunks) return;
  DeviceTokenizer tokenizer(t, in);
  DeviceToken* next = out + first[c];
  const uint64_t end = chunk_begin(in.n, chunks, c + 1);
  for_each_token(tokenizer, entries[c], end < stop ? end : stop,
                 [&](uint64_t start, uint64_t token_end, int32_t kind) {
    *next++ = DeviceToken{base + start, base + token_end, uint16_t(kind)};
  });
}

}  // namespace parafuse::fsm::cuda
