// parafuse boostfsm runtime: the bit-parallel NFA engine (fsm_compiler/engines/nfa_engine.py):
// patterns too big for a DFA run on their position automaton, a bit vector of W
// 64-bit words. At each boundary j, with the categories (prev, next) of the bytes
// around it (END at the end; a last '\n' is FINAL_NEWLINE):
//   1. report at j every tag with an accepting position in the state whose condition
//      holds at (prev, next), and every tag matching the empty string there;
//   2. candidates = first | follow(state), conditional edges where they hold;
//      state = candidates & byte_positions[byte j].
// follow(state) ORs one precomputed union per non-zero block of the state (block_width
// positions: 8, or 4 or 2 where 8 would make the tables too large).
// The runs themselves step a lazy DFA over these sets (fsm/sets/lazy_nfa.hpp).
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "fsm/core/walk.hpp"

namespace parafuse::fsm {
inline namespace v1 {

constexpr uint64_t kNfaMagic = 0x3241464e4d534650ull;  // "PFSMNFA2"
constexpr unsigned kPrevStart = 0, kNextEnd = 0, kNextFinalNewline = 4;

// Blob layout: emitters/fsm/engine_set_blob.py.
struct NfaTables {
  uint64_t words = 1, blocks = 0, block_width = 8, max_length = ~0ull;
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
  std::vector<uint64_t> accepting_mask;    // [words]: positions with an accept entry
  std::vector<uint64_t> conditional_mask;  // [words]: positions with a conditional follow edge
  // The accept entries of position p: accept_entry[accept_first[p], accept_first[p + 1])
  // (a report visits the accepting positions of its state, not every entry).
  std::vector<uint32_t> accept_first, accept_entry;
  // Byte classes: bytes of the same category and positions step alike (the lazy DFA's
  // columns, fsm/sets/lazy_nfa.hpp); byte_column[byte] < columns.
  std::vector<uint16_t> byte_column;
  size_t columns = 0;
  // Every match starts at offset 0 (a leading `^`): each first position and empty match
  // holds only where no byte precedes, so a run past offset 0 may stop once no thread lives.
  bool starts_at_zero_only = false;
  bool bounded() const { return max_length != ~0ull; }
};

inline bool intersects(const uint64_t* a, const std::vector<uint64_t>& b) {
  for (size_t w = 0; w < b.size(); ++w)
    if (a[w] & b[w]) return true;
  return false;
}

inline NfaTables parse_nfa(const uint8_t* blob, size_t size) {
  const uint64_t* slots = reinterpret_cast<const uint64_t*>(blob);
  constexpr size_t kHeaderSlots = 9;
  if (size < 8 * kHeaderSlots + 256 || slots[0] != kNfaMagic)
    throw std::runtime_error("not a parafuse NFA blob");
  NfaTables t;
  t.words = slots[1];
  t.blocks = slots[2];
  t.max_length = slots[3];
  t.conditional_follows = slots[4];
  t.conditional_firsts = slots[5];
  t.accepts = slots[6];
  t.empty_accepts = slots[7];
  t.block_width = slots[8];
  if (t.block_width != 8 && t.block_width != 4 && t.block_width != 2)
    throw std::runtime_error("NFA blob: a follow block width other than 8, 4 or 2");
  t.categories = blob + 8 * kHeaderSlots;
  const uint64_t* next = slots + kHeaderSlots + 32;
  t.byte_positions = next;
  next += 256 * t.words;
  t.follow = next;
  next += (t.blocks << t.block_width) * t.words;
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
  t.accepting_mask.assign(t.words, 0);
  t.conditional_mask.assign(t.words, 0);
  for (uint64_t a = 0; a < t.accepts; ++a)
    t.accepting_mask[t.accept[3 * a] >> 6] |= uint64_t(1) << (t.accept[3 * a] & 63);
  t.accept_first.assign(64 * t.words + 1, 0);
  for (uint64_t a = 0; a < t.accepts; ++a) {
    if (t.accept[3 * a] >= 64 * t.words) throw std::runtime_error("NFA blob: accept past the set");
    ++t.accept_first[t.accept[3 * a] + 1];
  }
  for (size_t p = 0; p < 64 * t.words; ++p) t.accept_first[p + 1] += t.accept_first[p];
  t.accept_entry.resize(t.accepts);
  std::vector<uint32_t> filled(t.accept_first.begin(), t.accept_first.end() - 1);
  for (uint64_t a = 0; a < t.accepts; ++a) t.accept_entry[filled[t.accept[3 * a]]++] = uint32_t(a);
  std::map<std::string, uint16_t> columns;
  t.byte_column.resize(256);
  for (unsigned byte = 0; byte < 256; ++byte) {
    std::string key(1, char(t.categories[byte]));
    key.append(reinterpret_cast<const char*>(t.byte_positions + size_t(byte) * t.words),
               8 * t.words);
    t.byte_column[byte] = columns.emplace(std::move(key), uint16_t(columns.size())).first->second;
  }
  t.columns = columns.size();
  // as NfaEngine.starts_at_zero_only (fsm_compiler/engines/nfa_engine.py)
  constexpr uint64_t kAtStart = uint64_t(0x1F) << (5 * kPrevStart);  // bits where prev is START
  bool held_at_zero = t.conditional_firsts + t.empty_accepts > 0;
  for (size_t w = 0; w < t.words; ++w) held_at_zero &= t.first[w] == 0;
  for (uint64_t c = 0; c < t.conditional_firsts; ++c)
    held_at_zero &= (t.conditional_first[2 * c + 1] & ~kAtStart) == 0;
  for (uint64_t a = 0; a < t.empty_accepts; ++a)
    held_at_zero &= (t.empty_accept[2 * a + 1] & ~kAtStart) == 0;
  t.starts_at_zero_only = held_at_zero;
  for (uint64_t c = 0; c < t.conditional_follows; ++c)
    t.conditional_mask[t.conditional_follow[3 * c] >> 6] |= uint64_t(1)
                                                             << (t.conditional_follow[3 * c] & 63);
  return t;
}

struct NfaChunk {
  std::vector<uint64_t> counts;
  std::vector<Match> matches;
};

inline bool has_bit(const uint64_t* state, uint64_t position) {
  return (state[position >> 6] >> (position & 63)) & 1;
}

// The condition bit of the boundary before data[at] (at == n: the end of the input).
inline uint64_t nfa_where(const NfaTables& t, const uint8_t* data, size_t n, size_t at) {
  const unsigned prev = at == 0 ? kPrevStart : t.categories[data[at - 1]];
  const unsigned next = at == n ? kNextEnd
                        : (data[at] == '\n' && at + 1 == n) ? kNextFinalNewline
                                                             : t.categories[data[at]];
  return uint64_t(1) << (prev * 5 + next);
}

// The conditions (boundary bits, as nfa_where's) under which `state` reports a tag: the
// union of its accepting positions' (0: it reports nowhere).
inline uint64_t accept_conditions(const NfaTables& t, const uint64_t* state) {
  uint64_t conditions = 0;
  for (size_t w = 0; w < t.words; ++w)
    for (uint64_t bits = state[w] & t.accepting_mask[w]; bits; bits &= bits - 1) {
      const size_t position = 64 * w + unsigned(__builtin_ctzll(bits));
      for (uint32_t e = t.accept_first[position]; e < t.accept_first[position + 1]; ++e)
        conditions |= t.accept[3 * t.accept_entry[e] + 2];
    }
  return conditions;
}

// Reports at the boundary `at` (state: the positions that matched the last byte).
inline void nfa_report(const NfaTables& t, const uint64_t* state, uint64_t where, uint64_t at,
                       bool with_matches, std::vector<uint32_t>& tags, NfaChunk& out) {
  tags.clear();
  for (size_t w = 0; w < t.words; ++w)
    for (uint64_t bits = state[w] & t.accepting_mask[w]; bits; bits &= bits - 1) {
      const size_t position = 64 * w + unsigned(__builtin_ctzll(bits));
      for (uint32_t e = t.accept_first[position]; e < t.accept_first[position + 1]; ++e) {
        const uint64_t* accept = t.accept + 3 * t.accept_entry[e];
        if ((accept[2] & where) && (tags.empty() || tags.back() != accept[1]))
          tags.push_back(uint32_t(accept[1]));
      }
    }
  for (uint64_t a = 0; a < t.empty_accepts; ++a)
    if (t.empty_accept[2 * a + 1] & where) tags.push_back(uint32_t(t.empty_accept[2 * a]));
  std::sort(tags.begin(), tags.end());
  tags.erase(std::unique(tags.begin(), tags.end()), tags.end());
  for (uint32_t tag : tags) {
    ++out.counts[tag];
    if (with_matches) out.matches.push_back(Match{at, tag});
  }
}

// One step on the byte at a boundary with condition `where`: state = (follow(state) |
// first, when `inject`) & byte_positions; returns whether any position is set.
template <size_t W>
inline bool nfa_step(const NfaTables& t, uint64_t* state, uint64_t* cand, const uint64_t* positions,
                     uint64_t where, bool any, bool inject) {
  const size_t words = W ? W : t.words;
  for (size_t w = 0; w < words; ++w) cand[w] = inject ? t.first[w] : 0;
  if (inject)
    for (uint64_t c = 0; c < t.conditional_firsts; ++c)
      if (t.conditional_first[2 * c + 1] & where) {
        const uint64_t position = t.conditional_first[2 * c];
        cand[position >> 6] |= uint64_t(1) << (position & 63);
      }
  if (any) {
    const unsigned width = unsigned(t.block_width);
    const uint64_t block_mask = (uint64_t(1) << width) - 1;
    for (size_t word = 0; word < words; ++word) {  // active positions are few: skip zeros
      uint64_t bits = state[word];
      while (bits) {
        const unsigned low = unsigned(__builtin_ctzll(bits)) / width * width;  // its block
        const size_t block = word * (64 / width) + low / width;
        const uint64_t* row =
            t.follow + ((block << width) + ((bits >> low) & block_mask)) * words;
        for (size_t w = 0; w < words; ++w) cand[w] |= row[w];
        bits &= ~(block_mask << low);
      }
    }
    if (t.conditional_follows && intersects(state, t.conditional_mask)) {
      for (uint64_t c = 0; c < t.conditional_follows; ++c) {
        const uint64_t* edge = t.conditional_follow + 3 * c;
        if ((edge[2] & where) && has_bit(state, edge[0]))
          cand[edge[1] >> 6] |= uint64_t(1) << (edge[1] & 63);
      }
    }
  }
  bool alive = false;
  for (size_t w = 0; w < words; ++w) {
    state[w] = cand[w] & positions[w];
    alive |= state[w] != 0;
  }
  return alive;
}

}  // namespace v1
}  // namespace parafuse::fsm
