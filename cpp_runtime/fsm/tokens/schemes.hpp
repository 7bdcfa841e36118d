// parafuse boostfsm runtime: a token set under every scheme (docs/fsm.md, "Token sets").
//
//   seq    one tokenizer over the whole input
//   spec   each chunk's entry is guessed by tokenizing the `lookback` bytes before it;
//          chunks run in parallel, then each is checked in order against the true entry
//          (its predecessor's exit) and re-run from there until it meets its own tokens
//   hspec  the same guesses; wrong chunks are re-run in parallel rounds, each from its
//          predecessor's current exit (usually one round fixes all); a round that fixes
//          only the first wrong chunk means the input does not fall in step, and the
//          rest is checked in order as spec does
//   enum   each chunk runs from its first byte and from each of the next `width` bytes
//          (until they meet); a true entry among them is spliced, else re-run as spec
//   fused  a token set has no fused DFA (maximal munch is not finite-state): runs enum
//          and says so
//   (asked for the token list, spec and hspec chunks write their tokens into rooms of
//   the result, moved together at the end (fsm/tokens/arena.hpp); enum chunks keep lists
//   of their own, copied in parallel; asked for counts only, chunks count and keep no
//   tokens (fsm/tokens/counting.hpp))
//   auto   seq on one thread or a small input; else seq, enum or hspec from measurements
//          of the input (fsm/tokens/auto.hpp); the reason quotes them
#pragma once

#include <omp.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "fsm/core/run_limits.hpp"
#include "fsm/tokens/arena.hpp"
#include "fsm/tokens/auto.hpp"
#include "fsm/tokens/chunks.hpp"
#include "fsm/tokens/counting.hpp"
#include "fsm/tokens/run_options.hpp"

namespace parafuse::fsm {
inline namespace v1 {

template <class Chunk>
std::vector<Chunk> plan_token_chunks(size_t from, size_t stop, size_t count) {
  std::vector<Chunk> chunks(count);
  const size_t span = stop - from;
  for (size_t k = 0; k < count; ++k) {
    chunks[k].begin = from + span * k / count;
    chunks[k].end = from + span * (k + 1) / count;
  }
  return chunks;
}

// Check chunks in order from `first`; re-run each wrong one from its true entry.
template <class Chunk>
void validate_in_order(const TokenTables& t, const uint8_t* data, size_t n,
                       std::vector<Chunk>& chunks, const std::vector<TokenBranches>* branches,
                       size_t first = 1) {
  Tokenizer tokenizer(t, data, n);
  for (size_t k = std::max<size_t>(first, 1); k < chunks.size(); ++k) {
    const size_t truth = chunks[k - 1].exit;
    if (truth == chunks[k].entry) continue;
    if constexpr (std::is_same_v<Chunk, TokenChunk>)
      if (branches && truth < chunks[k].end && splice_branch(chunks[k], (*branches)[k], truth))
        continue;
    rerun_chunk(tokenizer, chunks[k], truth, n);
  }
}

// How many chunks from the first are known right (each entry is its predecessor's exit).
template <class Chunk>
size_t validated_prefix(const std::vector<Chunk>& chunks) {
  size_t k = 1;
  while (k < chunks.size() && chunks[k].entry == chunks[k - 1].exit) ++k;
  return std::min(k, chunks.size());
}

// Parallel rounds: every chunk whose entry differs from its predecessor's exit re-runs
// from that exit. A round that fixes no more than the first wrong chunk (the tokenization
// does not fall in step) ends the rounds: the rest is checked in order, as spec does.
// Returns the rounds run; `in_order` tells whether the rest went in order.
template <class Chunk>
int validate_in_rounds(const TokenTables& t, const uint8_t* data, size_t n,
                       std::vector<Chunk>& chunks, int threads, bool& in_order) {
  int rounds = 0;
  in_order = false;
  std::vector<size_t> truth(chunks.size());
  size_t valid = validated_prefix(chunks);
  while (valid < chunks.size()) {
    for (size_t k = 1; k < chunks.size(); ++k) truth[k] = chunks[k - 1].exit;
    const long count = long(chunks.size());
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (long k = long(valid); k < count; ++k) {
      if (truth[size_t(k)] == chunks[size_t(k)].entry) continue;
      Tokenizer tokenizer(t, data, n);
      rerun_chunk(tokenizer, chunks[size_t(k)], truth[size_t(k)], n);
    }
    ++rounds;
    const size_t now = validated_prefix(chunks);
    if (now < chunks.size() && now <= valid + 1) {
      validate_in_order<Chunk>(t, data, n, chunks, nullptr, now);
      in_order = true;
      break;
    }
    valid = now;
  }
  return rounds;
}

// enum: each chunk from its first byte, with branches from the next bytes.
inline void enumerate_and_run(const TokenTables& t, const uint8_t* data, size_t n,
                              std::vector<TokenChunk>& chunks, int threads,
                              std::vector<TokenBranches>& branches) {
  const long count = long(chunks.size());
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (long k = 0; k < count; ++k) {
    Tokenizer tokenizer(t, data, n);
    TokenChunk& chunk = chunks[size_t(k)];
    run_chunk(tokenizer, chunk, chunk.begin, n);
    if (k > 0) branches[size_t(k)] = enumerate_branches(tokenizer, chunk, kEnumWidth, n);
  }
}

// Kind counts and, into `out` when given, the tokens of all chunks in order (enum's
// chunks keep lists of their own: their branches are spliced as lists). OutToken: any
// struct {start, end, kind}, such as a library's public Token.
template <class OutToken>
void gather_tokens(const std::vector<TokenChunk>& chunks, uint32_t kind_count,
                   std::vector<OutToken>* out_tokens, TokenRunResult& result, int threads) {
  const size_t count = chunks.size();
  std::vector<std::vector<uint64_t>> counts(count, std::vector<uint64_t>(kind_count, 0));
  std::vector<size_t> offset(count + 1, 0);
  for (size_t k = 0; k < count; ++k) offset[k + 1] = offset[k] + chunks[k].tokens.size();
  if (out_tokens) {
    out_tokens->clear();
    reserve_on_huge_pages(*out_tokens, offset[count]);
    out_tokens->resize(offset[count]);  // written below, by the threads (first touch)
  }
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long k = 0; k < long(count); ++k) {
    auto& mine = counts[size_t(k)];
    OutToken* out = out_tokens ? out_tokens->data() + offset[size_t(k)] : nullptr;
    for (const Token& token : chunks[size_t(k)].tokens) {
      ++mine[token.kind];
      if (out) *out++ = OutToken{token.start, token.end, token.kind};
    }
  }
  result.counts.assign(kind_count, 0);
  for (size_t k = 0; k < count; ++k)
    for (uint32_t kind = 0; kind < kind_count; ++kind) result.counts[kind] += counts[k][kind];
}

// Tokens from `from` while they start before `end`, straight into `out` (grown at the
// density seen so far, for all of [from, stop): fsm/tokens/list.hpp); counts per kind.
// Returns where the last token ends.
template <class OutToken>
size_t tokenize_into(Tokenizer& tokenizer, size_t from, size_t end, size_t stop,
                     std::vector<OutToken>& out, std::vector<uint64_t>& counts) {
  Token token;
  size_t p = from;
  const size_t first = out.size();
  while (p < end) {
    p = tokenizer.next_token(p, token);
    if (token.kind == kSkipToken) continue;
    ++counts[token.kind];
    if (out.size() == out.capacity())
      grow_token_list(out, out.size() - first, p - from, stop - from);
    out.push_back(OutToken{token.start, token.end, token.kind});
  }
  return p;
}

// `seq`: one tokenizer, straight into the caller's vector (no chunk list to gather).
template <class OutToken>
void tokenize_sequentially(const TokenTables& t, const uint8_t* data, size_t n, size_t from,
                           size_t stop, std::vector<OutToken>* tokens, TokenRunResult& result) {
  Tokenizer tokenizer(t, data, n);
  result.counts.assign(t.kind_count, 0);
  result.threads = 1;
  if (tokens) {
    reserve_on_huge_pages(*tokens, tokens->size() + expected_tokens(t, data, n, from, stop));
    result.exit = tokenize_into(tokenizer, from, stop, stop, *tokens, result.counts);
    return;
  }
  Token token;
  size_t p = from;
  while (p < stop) {
    p = tokenizer.next_token(p, token);
    if (token.kind != kSkipToken) ++result.counts[token.kind];
  }
  result.exit = p;
}

// The speculation and validation part of `reason` (after what auto said).
template <class Chunk>
std::string chunk_report(const std::vector<Chunk>& chunks, Scheme scheme,
                         int rounds, bool in_order) {
  uint64_t rerun = 0;
  size_t wrong = 0;
  for (const auto& chunk : chunks) rerun += chunk.rerun_bytes, wrong += chunk.rerun_bytes > 0;
  return std::to_string(chunks.size()) + " chunks, " + std::to_string(wrong) + " re-run (" +
         std::to_string(rerun) + " bytes)" +
         (scheme == Scheme::hspec ? ", " + std::to_string(rounds) + " rounds" : std::string()) +
         (in_order ? ", then in order (wrong starts did not fall in step)" : "");
}

// Each chunk from its speculated entry (chunk 0 from `from`), in parallel: the lookback
// guess, then its counts (CountChunk) or its tokens (TokenChunk): into its room of
// `out_tokens` when given (fsm/tokens/arena.hpp), else into its own list. With rooms, the
// first chunk is made 1/threads of the input (it starts at the true start, so it is never
// re-run, and its tokens are where they belong: the others are moved down behind it).
template <class Chunk, class OutToken = Token>
std::vector<Chunk> speculated_chunks(const TokenTables& t, const uint8_t* data, size_t n,
                                     size_t from, size_t stop, size_t count, int threads,
                                     std::vector<OutToken>* out_tokens = nullptr) {
  std::vector<Chunk> chunks = plan_token_chunks<Chunk>(from, stop, count);
  if constexpr (std::is_same_v<Chunk, TokenChunk>) {
    if (out_tokens && count > 1 && threads > 1) {
      std::vector<Chunk> rest =
          plan_token_chunks<Chunk>(from + (stop - from) / size_t(threads), stop, count - 1);
      chunks[0].end = rest[0].begin;
      std::copy(rest.begin(), rest.end(), chunks.begin() + 1);
    }
    if (out_tokens)
      make_rooms(chunks, expected_tokens(t, data, n, from, stop), std::max<size_t>(stop - from, 1),
                 *out_tokens);
  }
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (long k = 0; k < long(count); ++k) {
    Tokenizer tokenizer(t, data, n);
    Chunk& chunk = chunks[size_t(k)];
    const size_t entry = k == 0 ? from : lookback_entry(tokenizer, chunk.begin, t.lookback, n);
    if constexpr (std::is_same_v<Chunk, CountChunk>) {
      run_chunk(tokenizer, chunk, entry, n, t.kind_count);
    } else if (out_tokens) {
      run_chunk_in_room<OutToken>(tokenizer, chunk, entry, n, t.kind_count);
    } else {
      run_chunk(tokenizer, chunk, entry, n);
    }
  }
  return chunks;
}

// spec and hspec: speculated chunks, validated (every entry is then its predecessor's exit).
template <class Chunk, class OutToken = Token>
std::vector<Chunk> validated_chunks(const TokenTables& t, const uint8_t* data, size_t n,
                                    size_t from, size_t stop, size_t count,
                                    Scheme scheme, int threads, std::string& reason,
                                    std::vector<OutToken>* out_tokens = nullptr) {
  std::vector<Chunk> chunks =
      speculated_chunks<Chunk>(t, data, n, from, stop, count, threads, out_tokens);
  int rounds = 0;
  bool in_order = false;
  if (scheme == Scheme::hspec) rounds = validate_in_rounds(t, data, n, chunks, threads, in_order);
  else validate_in_order<Chunk>(t, data, n, chunks, nullptr);
  if (count > 1)
    reason += (reason.empty() ? "" : "; ") + chunk_report(chunks, scheme, rounds, in_order);
  return chunks;
}

// spec and hspec. With `tokens`: one tokenizing pass, each chunk into its room of the
// result, moved behind the previous one at the end (fsm/tokens/arena.hpp). Without: chunks
// count their tokens and keep none.
template <class OutToken>
TokenRunResult tokenize_in_chunks(const TokenTables& t, const uint8_t* data, size_t n,
                                  size_t from, size_t stop, size_t count,
                                  Scheme scheme, std::string reason, int threads,
                                  std::vector<OutToken>* tokens) {
  TokenRunResult result;
  if (tokens) {
    std::vector<TokenChunk> chunks = validated_chunks<TokenChunk>(
        t, data, n, from, stop, count, scheme, threads, reason, tokens);
    result.counts.assign(t.kind_count, 0);
    settle_rooms(chunks, *tokens, result.counts);
    result.exit = chunks.back().exit;
  } else {
    const std::vector<CountChunk> chunks =
        validated_chunks<CountChunk>(t, data, n, from, stop, count, scheme, threads, reason);
    result.counts.assign(t.kind_count, 0);
    for (const CountChunk& chunk : chunks)
      for (uint32_t kind = 0; kind < t.kind_count; ++kind)
        result.counts[kind] += uint64_t(chunk.counts[kind]);
    result.exit = chunks.back().exit;
  }
  result.scheme = scheme_name(scheme);
  result.reason = reason;
  result.threads = threads;
  return result;
}

// Tokenize data[from, stop) (default: all of data[0, n)) under options.scheme; the tokens
// go to `tokens` when given.
template <class OutToken = Token>
TokenRunResult run_token_set(const TokenTables& t, const uint8_t* data, size_t n,
                             const TokenRunOptions& options, std::vector<OutToken>* tokens) {
  Scheme scheme = scheme_named(options.scheme);
  check_threads(options.threads);
  check_chunks(options.chunks);
  TokenRunResult result;
  const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
  std::string reason;
  const size_t from = std::min(options.from, n), stop = std::max(from, std::min(options.stop, n));
  if (scheme == Scheme::automatic)
    scheme = token_auto_choice(t, data, n, from, stop, threads, reason);
  if (scheme == Scheme::fused) {
    reason = "a token set has no fused DFA (maximal munch is not finite-state): ran enum";
    scheme = Scheme::enumeration;
  }
  if (scheme == Scheme::seq) {
    if (reason.empty()) reason = "requested: one tokenizer over the whole input";
    tokenize_sequentially(t, data, n, from, stop, tokens, result);
    result.scheme = scheme_name(scheme);
    result.reason = reason;
    return result;
  }
  const size_t wanted = options.chunks ? options.chunks : size_t(4) * size_t(threads);
  const size_t count = std::max<size_t>(1, std::min(wanted, stop - from));
  if (scheme != Scheme::enumeration)
    return tokenize_in_chunks(t, data, n, from, stop, count, scheme, reason, threads, tokens);
  std::vector<TokenChunk> chunks = plan_token_chunks<TokenChunk>(from, stop, count);  // enum
  std::vector<TokenBranches> branches(count);
  enumerate_and_run(t, data, n, chunks, threads, branches);
  if (count > 1) {
    validate_in_order(t, data, n, chunks, &branches);
    reason += (reason.empty() ? "" : "; ") + chunk_report(chunks, scheme, 0, false);
  }
  gather_tokens(chunks, t.kind_count, tokens, result, threads);
  result.exit = chunks.back().exit;
  result.scheme = scheme_name(scheme);
  result.reason = reason;
  result.threads = threads;
  return result;
}

}  // namespace v1
}  // namespace parafuse::fsm
