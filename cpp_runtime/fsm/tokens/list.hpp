// parafuse boostfsm runtime: how a token list grows (docs/fsm.md, "Token sets").
//
// A token list of millions of records is written once, front to back. Growing it by
// doubling copies it about twice and touches every copy through fresh 4 KiB pages (one
// page fault per 170 tokens, as costly as tokenizing them). So a full list is regrown at
// the density seen so far, for the whole of its span (an eighth more), onto memory advised
// for transparent huge pages before anything is written to it.
// (Reserved once, after 64 KiB, at that density, the list of an input that is denser
// further on, such as C headers, would grow by doubling, on 4 KiB pages, copying it all.)
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fsm/tokens/tokenizer.hpp"

namespace parafuse::fsm {
inline namespace v1 {

constexpr size_t kDensityProbe = 1 << 16;  // bytes tokenized before reserving for the rest
constexpr size_t kHugePage = size_t(2) << 20;

// Ask for transparent huge pages over the untouched part of a large token list. Only
// advice: without THP nothing changes.
template <class Vector>
void advise_huge_pages(Vector& out) {
  const size_t bytes = out.capacity() * sizeof(out[0]);
  if (bytes < 2 * kHugePage) return;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(out.data() + out.size());
  const uintptr_t first = (begin + kHugePage - 1) / kHugePage * kHugePage;
  const uintptr_t last = (reinterpret_cast<uintptr_t>(out.data()) + bytes) / kHugePage * kHugePage;
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

// Make room for `capacity` tokens: new memory, advised before the old tokens are copied
// onto it (std::vector::reserve would copy first, through 4 KiB pages).
template <class Vector>
void reserve_on_huge_pages(Vector& out, size_t capacity) {
  if (capacity <= out.capacity()) return;
  Vector bigger;
  bigger.reserve(capacity);
  advise_huge_pages(bigger);
  bigger.insert(bigger.end(), out.begin(), out.end());
  out.swap(bigger);
}

// `out` is full, holding `count` tokens of a span of `total` bytes of which `done` are
// tokenized: room for the rest at the density so far, an eighth more (doubling while
// under kDensityProbe bytes).
template <class Vector>
void grow_token_list(Vector& out, size_t count, size_t done, size_t total) {
  size_t wanted = std::max<size_t>(2 * out.capacity(), 1024);
  if (done >= kDensityProbe && total > done) {
    const double rest = double(count) * double(total - done) / double(done) * 1.125 + 64;
    wanted = std::max(out.size() + size_t(rest), out.size() + out.size() / 8 + 64);
  }
  reserve_on_huge_pages(out, wanted);
}


constexpr size_t kDensitySamples = 16, kDensitySample = 4096;

// Tokens (not skipped) expected in [from, stop), with a quarter of headroom: the density
// of kDensitySamples samples of kDensitySample bytes spread over it, each tokenized from
// its first byte by a tokenizer that sees no further than twice the sample (a sample
// inside an unterminated comment costs no more). 0 for a span under 16 samples.
inline size_t expected_tokens(const TokenTables& t, const uint8_t* data, size_t n, size_t from,
                              size_t stop) {
  stop = std::min(stop, n);
  if (stop <= from || stop - from < 16 * kDensitySamples * kDensitySample) return 0;
  const size_t span = stop - from;
  size_t tokens = 0, bytes = 0;
  Token token;
  for (size_t j = 0; j < kDensitySamples; ++j) {
    const size_t begin = from + span / kDensitySamples * j;
    Tokenizer tokenizer(t, data, std::min(n, begin + 2 * kDensitySample));
    size_t p = begin;
    while (p < begin + kDensitySample) {
      p = tokenizer.next_token(p, token);
      tokens += token.kind != kSkipToken;
    }
    bytes += p - begin;
  }
  return size_t(double(tokens) * double(span) / double(bytes) * 1.25) + 1024;
}

// Tokens from `from` while they start before `stop`, skip tokens left out; returns where
// the last one ends (>= stop, or `from` when from >= stop).
inline size_t tokenize_span(Tokenizer& tokenizer, size_t from, size_t stop, size_t n,
                            std::vector<Token>& out) {
  size_t p = from;
  const size_t first = out.size(), total = std::min(stop, n) - std::min(from, n);
  Token token;
  while (p < stop && p < n) {
    p = tokenizer.next_token(p, token);
    if (token.kind == kSkipToken) continue;
    if (out.size() == out.capacity()) grow_token_list(out, out.size() - first, p - from, total);
    out.push_back(token);
  }
  return p;
}

}  // namespace v1
}  // namespace parafuse::fsm
