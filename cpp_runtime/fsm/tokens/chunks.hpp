// parafuse boostfsm runtime: one chunk of a parallel tokenization and how it is corrected.
//
// Tokenizing from a position depends on nothing but that position (maximal munch has no
// other state), so a chunk tokenized from a guessed entry is right from the first token
// start it shares with the true tokenization on. A chunk keeps every token that starts
// in [entry, end); `exit` is where its
// last token ends (>= end, a token may run past the chunk; or the input's end). Skip
// tokens are not kept: two tokenizations are merged where an emitted token starts at the
// same position in both (a common skip token merges them one token later).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "fsm/tokens/list.hpp"

namespace parafuse::fsm {
inline namespace v1 {

struct TokenChunk {
  size_t begin = 0, end = 0;   // the chunk's bytes
  size_t entry = 0, exit = 0;  // where its tokenization starts and ends
  std::vector<Token> tokens;
  uint64_t rerun_bytes = 0;    // bytes tokenized again after a wrong entry
  // In a room of the result instead (fsm/tokens/arena.hpp, spec and hspec): `in_room`
  // tokens from `place` of `arena` (room for `room`), counted per kind in `counts`, while
  // leave_room is set (it moves them to `tokens`).
  void* arena = nullptr;
  size_t place = 0, room = 0, in_room = 0;
  std::vector<uint64_t> counts;
  void (*leave_room)(TokenChunk&) = nullptr;
};

// Index of the token starting at `position`, or tokens.size() when none does.
inline size_t token_starting_at(const std::vector<Token>& tokens, size_t position) {
  const auto found = std::lower_bound(tokens.begin(), tokens.end(), position,
                                      [](const Token& token, size_t p) { return token.start < p; });
  return found != tokens.end() && found->start == position ? size_t(found - tokens.begin())
                                                           : tokens.size();
}

// Re-tokenize `chunk` from the true entry x: new tokens until one starts where one of the
// chunk's tokens starts, then the chunk's own from there (they are right from there on).
// Returns whether the chunk changed.
inline bool rerun_chunk(Tokenizer& tokenizer, TokenChunk& chunk, size_t x, size_t n) {
  if (x == chunk.entry) return false;
  if (chunk.leave_room) chunk.leave_room(chunk);
  if (x >= chunk.end) {
    chunk.tokens.clear();
    chunk.entry = chunk.exit = x;
    return true;
  }
  std::vector<Token> fresh;
  const std::vector<Token>& old = chunk.tokens;
  size_t j = 0, p = x;
  bool merged = false;
  Token token;
  while (p < chunk.end) {
    while (j < old.size() && old[j].start < p) ++j;
    if (j < old.size() && old[j].start == p) {
      fresh.insert(fresh.end(), old.begin() + std::ptrdiff_t(j), old.end());
      merged = true;
      break;
    }
    const size_t from = p;
    p = tokenizer.next_token(p, token);
    chunk.rerun_bytes += p - from;
    if (token.kind != kSkipToken) fresh.push_back(token);
  }
  if (!merged) chunk.exit = p;
  chunk.entry = x;
  chunk.tokens.swap(fresh);
  return true;
}

// The first token boundary at or after `begin` of a tokenization started `lookback`
// bytes earlier: the speculated entry of a chunk.
inline size_t lookback_entry(Tokenizer& tokenizer, size_t begin, size_t lookback, size_t n) {
  size_t p = begin > lookback ? begin - lookback : 0;
  Token token;
  while (p < begin && p < n) p = tokenizer.next_token(p, token);
  return p;
}

// Tokenize a chunk from `entry` (a guess, or the truth).
inline void run_chunk(Tokenizer& tokenizer, TokenChunk& chunk, size_t entry, size_t n) {
  chunk.entry = entry;
  chunk.tokens.clear();
  chunk.exit = tokenize_span(tokenizer, entry, chunk.end, n, chunk.tokens);
}

// Enumeration: besides the tokens from `begin`, branches from each of the next `width`
// positions, each until it meets a start of the main tokenization. A true entry found in
// a branch is spliced in: the branch up to the meeting point, the main tokens after.
struct TokenBranches {
  std::vector<std::vector<Token>> branches;
  std::vector<size_t> exits;  // where a branch that never met the main one ended
};

inline TokenBranches enumerate_branches(Tokenizer& tokenizer, const TokenChunk& chunk,
                                        size_t width, size_t n) {
  TokenBranches result;
  for (size_t x = chunk.begin + 1; x < chunk.begin + width && x < chunk.end; ++x) {
    if (token_starting_at(chunk.tokens, x) != chunk.tokens.size()) continue;
    bool known = false;
    for (const auto& branch : result.branches)
      known = known || token_starting_at(branch, x) != branch.size();
    if (known) continue;
    std::vector<Token> branch;
    size_t p = x;
    Token token;
    while (p < chunk.end && token_starting_at(chunk.tokens, p) == chunk.tokens.size()) {
      p = tokenizer.next_token(p, token);
      if (token.kind != kSkipToken) branch.push_back(token);
    }
    result.branches.push_back(std::move(branch));
    result.exits.push_back(p);
  }
  return result;
}

// Splice the true entry x from a branch; false when no branch has a token starting at x.
inline bool splice_branch(TokenChunk& chunk, const TokenBranches& found, size_t x) {
  for (size_t b = 0; b < found.branches.size(); ++b) {
    const auto& branch = found.branches[b];
    const size_t at = token_starting_at(branch, x);
    if (at == branch.size()) continue;
    std::vector<Token> spliced(branch.begin() + std::ptrdiff_t(at), branch.end());
    const size_t meet = found.exits[b];
    const size_t j = token_starting_at(chunk.tokens, meet);
    if (j != chunk.tokens.size())
      spliced.insert(spliced.end(), chunk.tokens.begin() + std::ptrdiff_t(j), chunk.tokens.end());
    else
      chunk.exit = meet;
    chunk.tokens.swap(spliced);
    chunk.entry = x;
    return true;
  }
  return false;
}

}  // namespace v1
}  // namespace parafuse::fsm
