// parafuse boostfsm runtime: the bit-parallel NFA engine (fsm_compiler/nfa_engine.py):
// patterns too big for a DFA run on their position automaton, a bit vector of W
// 64-bit words. One step on byte b:
//   candidates = floating_first | follow(state)   (| anchored_first at offset 0)
//   state      = candidates & byte_positions[b]
// follow(state) ORs one precomputed union per non-zero byte of the state (8 positions).
// An engine whose matches are at most `max_length` bytes long runs its chunks in
// parallel, each from `max_length` bytes before the chunk with an empty state: every
// chunk starts exactly. An unbounded engine runs one chunk.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "fsm/walk.hpp"

namespace parafuse::fsm {
inline namespace v1 {

constexpr uint64_t kNfaMagic = 0x3141464e4d534650ull;  // "PFSMNFA1"

// Blob (fsm_compiler emitters/fsm/engine_set_blob.py): u64 magic, words, blocks,
// max_length (~0: unbounded), accept_count, then u64 arrays: byte_positions[256][W],
// follow[blocks][256][W], floating_first[W], anchored_first[W], accept_tags[accept_count],
// accept_masks[accept_count][W].
struct NfaTables {
  uint64_t words = 1, blocks = 0, max_length = ~0ull, accept_count = 0;
  const uint64_t* byte_positions = nullptr;
  const uint64_t* follow = nullptr;
  const uint64_t* floating_first = nullptr;
  const uint64_t* anchored_first = nullptr;
  const uint64_t* accept_tags = nullptr;
  const uint64_t* accept_masks = nullptr;
  bool bounded() const { return max_length != ~0ull; }
};

inline NfaTables parse_nfa(const uint8_t* blob, size_t size) {
  const uint64_t* words = reinterpret_cast<const uint64_t*>(blob);
  if (size < 40 || words[0] != kNfaMagic) throw std::runtime_error("not a parafuse NFA blob");
  NfaTables t;
  t.words = words[1];
  t.blocks = words[2];
  t.max_length = words[3];
  t.accept_count = words[4];
  const uint64_t* next = words + 5;
  t.byte_positions = next;
  next += 256 * t.words;
  t.follow = next;
  next += t.blocks * 256 * t.words;
  t.floating_first = next;
  next += t.words;
  t.anchored_first = next;
  next += t.words;
  t.accept_tags = next;
  next += t.accept_count;
  t.accept_masks = next;
  next += t.accept_count * t.words;
  if (size_t(reinterpret_cast<const uint8_t*>(next) - blob) != size)
    throw std::runtime_error("NFA blob: wrong size");
  return t;
}

struct NfaChunk {
  std::vector<uint64_t> counts;
  std::vector<Match> matches;
};

// Matches ending in (begin, end] (by offset, then tag), scanned from `scan`.
template <size_t W>
void nfa_scan(const NfaTables& t, const uint8_t* data, size_t scan, size_t begin, size_t end,
              bool with_matches, NfaChunk& out) {
  const size_t words = t.words;  // == W, or the dynamic count when W == 0
  const size_t n_words = W ? W : words;
  std::vector<uint64_t> state_vec(n_words, 0), cand_vec(n_words, 0);
  uint64_t* state = state_vec.data();
  uint64_t* cand = cand_vec.data();
  bool any = false;
  for (size_t at = scan; at < end; ++at) {
    const uint64_t* positions = t.byte_positions + size_t(data[at]) * n_words;
    if (!any && at != 0) {  // empty state: only floating first positions can match
      bool hit = false;
      for (size_t w = 0; w < n_words; ++w) hit |= (positions[w] & t.floating_first[w]) != 0;
      if (!hit) continue;
    }
    for (size_t w = 0; w < n_words; ++w) cand[w] = t.floating_first[w];
    if (at == 0)
      for (size_t w = 0; w < n_words; ++w) cand[w] |= t.anchored_first[w];
    if (any) {
      for (size_t block = 0; block < t.blocks; ++block) {
        const unsigned byte = unsigned(state[block >> 3] >> ((block & 7) * 8)) & 0xFF;
        if (!byte) continue;
        const uint64_t* row = t.follow + (block * 256 + byte) * n_words;
        for (size_t w = 0; w < n_words; ++w) cand[w] |= row[w];
      }
    }
    any = false;
    for (size_t w = 0; w < n_words; ++w) {
      state[w] = cand[w] & positions[w];
      any |= state[w] != 0;
    }
    if (!any || at < begin) continue;
    for (size_t a = 0; a < t.accept_count; ++a) {
      const uint64_t* mask = t.accept_masks + a * n_words;
      bool hit = false;
      for (size_t w = 0; w < n_words; ++w) hit |= (state[w] & mask[w]) != 0;
      if (!hit) continue;
      ++out.counts[t.accept_tags[a]];
      if (with_matches) out.matches.push_back(Match{uint64_t(at + 1), uint32_t(t.accept_tags[a])});
    }
  }
}

struct NfaResult {
  std::vector<uint64_t> counts;
  std::vector<Match> matches;
  size_t chunks = 1;
};

// Runs the engine over data[0, n) in `chunks` chunks (one when unbounded).
inline NfaResult run_nfa(const NfaTables& t, const uint8_t* data, size_t n, uint32_t tag_count,
                         int threads, size_t chunks, bool with_matches) {
  if (!t.bounded() || n == 0) chunks = 1;
  chunks = std::max<size_t>(1, std::min(chunks, n));
  std::vector<NfaChunk> parts(chunks);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (size_t c = 0; c < chunks; ++c) {
    const size_t begin = n * c / chunks, end = n * (c + 1) / chunks;
    const size_t scan = t.bounded() ? (begin > t.max_length ? begin - t.max_length : 0) : 0;
    NfaChunk& part = parts[c];
    part.counts.assign(tag_count, 0);
    switch (t.words) {
      case 1: nfa_scan<1>(t, data, scan, begin, end, with_matches, part); break;
      case 2: nfa_scan<2>(t, data, scan, begin, end, with_matches, part); break;
      case 4: nfa_scan<4>(t, data, scan, begin, end, with_matches, part); break;
      default: nfa_scan<0>(t, data, scan, begin, end, with_matches, part); break;
    }
  }
  NfaResult result;
  result.chunks = chunks;
  result.counts.assign(tag_count, 0);
  for (const NfaChunk& part : parts) {
    for (uint32_t tag = 0; tag < tag_count; ++tag) result.counts[tag] += part.counts[tag];
    result.matches.insert(result.matches.end(), part.matches.begin(), part.matches.end());
  }
  return result;
}

}  // namespace v1
}  // namespace parafuse::fsm
