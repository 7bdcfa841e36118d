// parafuse boostfsm runtime: the bit-parallel NFA engine (fsm_compiler/nfa_engine.py):
// patterns too big for a DFA run on their position automaton, a bit vector of W
// 64-bit words. At each boundary j, with the categories (prev, next) of the bytes
// around it (END at the end; a last '\n' is FINAL_NEWLINE):
//   1. report at j every tag with an accepting position in the state whose condition
//      holds at (prev, next), and every tag matching the empty string there;
//   2. candidates = first | follow(state), conditional edges where they hold;
//      state = candidates & byte_positions[byte j].
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
constexpr unsigned kPrevStart = 0, kNextEnd = 0, kNextFinalNewline = 4;

// Blob layout: emitters/fsm/engine_set_blob.py.
struct NfaTables {
  uint64_t words = 1, blocks = 0, max_length = ~0ull;
  uint64_t conditional_follows = 0, conditional_firsts = 0, accepts = 0, empty_accepts = 0;
  const uint8_t* categories = nullptr;  // [256]
  const uint64_t* byte_positions = nullptr;
  const uint64_t* follow = nullptr;
  const uint64_t* first = nullptr;
  const uint64_t* any_first = nullptr;
  const uint64_t* conditional_follow = nullptr;  // (from, to, condition)
  const uint64_t* conditional_first = nullptr;   // (position, condition)
  const uint64_t* accept = nullptr;              // (position, tag, condition), by tag
  const uint64_t* empty_accept = nullptr;        // (tag, condition)
  bool bounded() const { return max_length != ~0ull; }
};

inline NfaTables parse_nfa(const uint8_t* blob, size_t size) {
  const uint64_t* slots = reinterpret_cast<const uint64_t*>(blob);
  if (size < 64 || slots[0] != kNfaMagic) throw std::runtime_error("not a parafuse NFA blob");
  NfaTables t;
  t.words = slots[1];
  t.blocks = slots[2];
  t.max_length = slots[3];
  t.conditional_follows = slots[4];
  t.conditional_firsts = slots[5];
  t.accepts = slots[6];
  t.empty_accepts = slots[7];
  t.categories = blob + 64;
  const uint64_t* next = slots + 8 + 32;
  t.byte_positions = next;
  next += 256 * t.words;
  t.follow = next;
  next += t.blocks * 256 * t.words;
  t.first = next;
  next += t.words;
  t.any_first = next;
  next += t.words;
  t.conditional_follow = next;
  next += 3 * t.conditional_follows;
  t.conditional_first = next;
  next += 2 * t.conditional_firsts;
  t.accept = next;
  next += 3 * t.accepts;
  t.empty_accept = next;
  next += 2 * t.empty_accepts;
  if (size_t(reinterpret_cast<const uint8_t*>(next) - blob) != size)
    throw std::runtime_error("NFA blob: wrong size");
  return t;
}

struct NfaChunk {
  std::vector<uint64_t> counts;
  std::vector<Match> matches;
};

inline bool has_bit(const uint64_t* state, uint64_t position) {
  return (state[position >> 6] >> (position & 63)) & 1;
}

// Reports at the boundaries j in [begin, end) (and at n when end == n), scanned from
// `scan` with an empty state; W words of state (0: t.words, not unrolled).
template <size_t W>
void nfa_scan(const NfaTables& t, const uint8_t* data, size_t n, size_t scan, size_t begin,
              size_t end, bool with_matches, NfaChunk& out) {
  const size_t words = W ? W : t.words;
  std::vector<uint64_t> state_vec(words, 0), cand_vec(words, 0);
  uint64_t* state = state_vec.data();
  uint64_t* cand = cand_vec.data();
  std::vector<uint32_t> tags;
  bool any = false;
  const bool idle_skip = t.empty_accepts == 0;
  const size_t last = end == n ? n + 1 : end;
  for (size_t at = scan; at < last; ++at) {
    const uint64_t* positions = at < n ? t.byte_positions + size_t(data[at]) * words : nullptr;
    if (!any && idle_skip && at < n) {  // nothing to report, nothing active
      bool hit = false;
      for (size_t w = 0; w < words; ++w) hit |= (positions[w] & t.any_first[w]) != 0;
      if (!hit) continue;
    }
    const unsigned prev = at == 0 ? kPrevStart : t.categories[data[at - 1]];
    const unsigned next = at == n ? kNextEnd
                          : (data[at] == '\n' && at + 1 == n) ? kNextFinalNewline
                                                               : t.categories[data[at]];
    const uint64_t where = uint64_t(1) << (prev * 5 + next);
    if (at >= begin && (any || t.empty_accepts)) {
      tags.clear();
      for (uint64_t a = 0; a < t.accepts; ++a) {
        const uint64_t* accept = t.accept + 3 * a;
        if ((accept[2] & where) && has_bit(state, accept[0]) &&
            (tags.empty() || tags.back() != accept[1]))
          tags.push_back(uint32_t(accept[1]));
      }
      for (uint64_t a = 0; a < t.empty_accepts; ++a)
        if (t.empty_accept[2 * a + 1] & where) tags.push_back(uint32_t(t.empty_accept[2 * a]));
      std::sort(tags.begin(), tags.end());
      tags.erase(std::unique(tags.begin(), tags.end()), tags.end());
      for (uint32_t tag : tags) {
        ++out.counts[tag];
        if (with_matches) out.matches.push_back(Match{uint64_t(at), tag});
      }
    }
    if (at == n) break;
    for (size_t w = 0; w < words; ++w) cand[w] = t.first[w];
    for (uint64_t c = 0; c < t.conditional_firsts; ++c)
      if (t.conditional_first[2 * c + 1] & where) {
        const uint64_t position = t.conditional_first[2 * c];
        cand[position >> 6] |= uint64_t(1) << (position & 63);
      }
    if (any) {
      for (size_t block = 0; block < t.blocks; ++block) {
        const unsigned byte = unsigned(state[block >> 3] >> ((block & 7) * 8)) & 0xFF;
        if (!byte) continue;
        const uint64_t* row = t.follow + (block * 256 + byte) * words;
        for (size_t w = 0; w < words; ++w) cand[w] |= row[w];
      }
      for (uint64_t c = 0; c < t.conditional_follows; ++c) {
        const uint64_t* edge = t.conditional_follow + 3 * c;
        if ((edge[2] & where) && has_bit(state, edge[0]))
          cand[edge[1] >> 6] |= uint64_t(1) << (edge[1] & 63);
      }
    }
    any = false;
    for (size_t w = 0; w < words; ++w) {
      state[w] = cand[w] & positions[w];
      any |= state[w] != 0;
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
  chunks = std::max<size_t>(1, std::min(chunks, n));  // chunk c reports at [begin, end)
  std::vector<NfaChunk> parts(chunks);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (size_t c = 0; c < chunks; ++c) {
    const size_t begin = n * c / chunks, end = n * (c + 1) / chunks;
    const size_t scan = t.bounded() ? (begin > t.max_length ? begin - t.max_length : 0) : 0;
    NfaChunk& part = parts[c];
    part.counts.assign(tag_count, 0);
    switch (t.words) {
      case 1: nfa_scan<1>(t, data, n, scan, begin, end, with_matches, part); break;
      case 2: nfa_scan<2>(t, data, n, scan, begin, end, with_matches, part); break;
      case 4: nfa_scan<4>(t, data, n, scan, begin, end, with_matches, part); break;
      default: nfa_scan<0>(t, data, n, scan, begin, end, with_matches, part); break;
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
