// parafuse boostfsm runtime: a chunk of a parallel tokenization that counts its tokens
// without storing them (a run that was not asked for the token list, under spec and hspec).
//
// A chunk keeps no bitmap of where its tokens start (a read-modify-write per token costs
// as much as 40% on a short-token input such as JSON). A re-run from the true entry x
// walks the old tokenization (from the old entry) and the new one (from x) side by side,
// always advancing the one behind, uncounting old tokens and counting new ones, until both
// reach the same token start (they are the same from there) or both pass the chunk's end.
// The walk is as long as the part that was wrong, twice.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fsm/tokens/tokenizer.hpp"

namespace parafuse::fsm {
inline namespace v1 {

struct CountChunk {
  size_t begin = 0, end = 0;
  size_t entry = 0, exit = 0;
  std::vector<int64_t> counts;  // per kind
  uint64_t rerun_bytes = 0;
};

// Tokenize a chunk from `entry`, counting its tokens.
inline void run_chunk(Tokenizer& tokenizer, CountChunk& chunk, size_t entry, size_t n,
                      uint32_t kind_count) {
  chunk.entry = entry;
  chunk.counts.assign(kind_count, 0);
  size_t p = entry;
  Token token;
  while (p < chunk.end && p < n) {
    p = tokenizer.next_token(p, token);
    if (token.kind != kSkipToken) ++chunk.counts[token.kind];
  }
  chunk.exit = p;
}

// Re-tokenize from the true entry x (see the top of this file). Returns whether it changed.
inline bool rerun_chunk(Tokenizer& tokenizer, CountChunk& chunk, size_t x, size_t n) {
  if (x == chunk.entry) return false;
  size_t old = chunk.entry, fresh = x;
  const size_t end = std::min(chunk.end, n);
  Token token;
  while (old != fresh && std::min(old, fresh) < end) {
    if (old < fresh) {
      old = tokenizer.next_token(old, token);
      if (token.kind != kSkipToken) --chunk.counts[token.kind];
    } else {
      const size_t from = fresh;
      fresh = tokenizer.next_token(fresh, token);
      chunk.rerun_bytes += fresh - from;
      if (token.kind != kSkipToken) ++chunk.counts[token.kind];
    }
  }
  if (old != fresh || fresh >= end) chunk.exit = fresh;  // they did not meet inside
  chunk.entry = x;
  return true;
}

}  // namespace v1
}  // namespace parafuse::fsm
