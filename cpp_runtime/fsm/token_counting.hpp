// parafuse boostfsm runtime: a chunk of a parallel tokenization that counts its tokens
// without storing them (a run that was not asked for the token list, under spec and hspec).
//
// Instead of its tokens, a chunk keeps one bit per byte (set where a token of its current
// tokenization starts, skip tokens included) and its counts per kind. Re-running it from
// the true entry x walks fresh tokens until one starts on a set bit m (the tokenizations
// meet); the old tokenization's tokens before m are then walked again from the old entry,
// their bits cleared and their kinds uncounted. That walk is as long as the part that
// was wrong, which is what a re-run costs anyway.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fsm/tokenizer.hpp"

namespace parafuse::fsm {
inline namespace v1 {

struct CountChunk {
  size_t begin = 0, end = 0;
  size_t entry = 0, exit = 0;
  std::vector<uint64_t> starts;  // bit i: a token starts at begin + i
  std::vector<int64_t> counts;   // per kind
  uint64_t rerun_bytes = 0;

  bool starts_at(size_t p) const { return (starts[(p - begin) >> 6] >> ((p - begin) & 63)) & 1; }
  void mark(size_t p, bool on) {
    const uint64_t bit = uint64_t(1) << ((p - begin) & 63);
    if (on) starts[(p - begin) >> 6] |= bit;
    else starts[(p - begin) >> 6] &= ~bit;
  }
};

// Tokenize a chunk from `entry`, counting and marking its token starts.
inline void run_chunk(Tokenizer& tokenizer, CountChunk& chunk, size_t entry, size_t n,
                      uint32_t kind_count) {
  chunk.entry = entry;
  chunk.starts.assign((chunk.end - chunk.begin + 63) / 64 + 1, 0);
  chunk.counts.assign(kind_count, 0);
  size_t p = entry;
  Token token;
  while (p < chunk.end && p < n) {
    chunk.mark(p, true);
    p = tokenizer.next_token(p, token);
    if (token.kind != kSkipToken) ++chunk.counts[token.kind];
  }
  chunk.exit = p;
}

// Re-tokenize from the true entry x (see the top of this file). Returns whether it changed.
inline bool rerun_chunk(Tokenizer& tokenizer, CountChunk& chunk, size_t x, size_t n) {
  if (x == chunk.entry) return false;
  const size_t old_entry = chunk.entry;
  size_t p = x, meet = chunk.end;
  bool merged = false;
  Token token;
  while (p < chunk.end && p < n) {
    if (chunk.starts_at(p)) {
      merged = true;
      meet = p;
      break;
    }
    chunk.mark(p, true);
    const size_t from = p;
    p = tokenizer.next_token(p, token);
    chunk.rerun_bytes += p - from;
    if (token.kind != kSkipToken) ++chunk.counts[token.kind];
  }
  for (size_t q = old_entry; q < meet && q < n;) {  // the old tokens before the meeting point
    chunk.mark(q, false);
    q = tokenizer.next_token(q, token);
    if (token.kind != kSkipToken) --chunk.counts[token.kind];
  }
  if (!merged) chunk.exit = std::max(p, x);
  chunk.entry = x;
  return true;
}

}  // namespace v1
}  // namespace parafuse::fsm
