// parafuse boostfsm runtime: self-loops of a tokenizer DFA, run without the table walk
// (docs/fsm.md, "Token sets", the sequential tokenizer).
//
// A table-driven DFA pays one dependent load per byte: the next state's row is known only
// once the current one is loaded. Most bytes of a token stream, though, are read in a
// state that loops on itself (an identifier's tail, a run of whitespace, the body of a
// comment or a string), where the next state is known to be the same one. For each state
// the runtime finds the bytes that keep it where it is (its stay set) and, once the DFA
// enters such a state, advances over them without the walk:
//   scan    the stay set is large and so is the rest (an identifier's tail): test each byte
//           against the state's own row (loads that depend on the position only, which
//           the CPU overlaps)
//   find    at most 3 bytes leave the state (a comment's body leaves on `*`, a string's
//           on `"`, `\` or a newline): search for them 16 bytes at a time (SSE2)
//   end     no byte leaves it: the state lasts to the end of the input
// The result is the same as walking each byte: the state does not change over the bytes
// skipped, so neither does an accepting position's kind (the last of them is taken).
// Each byte skipped so saves the table walk, the floor of a table-driven DFA (about 4 ns
// a byte on the machine measured in docs/fsm.md).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace parafuse::fsm {
inline namespace v1 {

enum TokenLoop : uint8_t { kLoopNone = 0, kLoopScan = 1, kLoopFind = 2, kLoopEnd = 3 };

// The self-loop of one state of a DFA (rows of 1 << shift entries); `exits` gets the
// bytes that leave a kLoopFind state (padded by repeating the last).
inline TokenLoop find_token_loop(uint32_t row, uint32_t dead, const uint32_t* next,
                                 const uint8_t* byte_class, std::array<uint8_t, 4>& exits) {
  exits = {0, 0, 0, 0};
  if (row == dead) return kLoopNone;
  std::vector<uint8_t> leave;
  for (int b = 0; b < 256; ++b)
    if (next[row + byte_class[b]] != row) leave.push_back(uint8_t(b));
  if (leave.size() == 256) return kLoopNone;
  if (leave.empty()) return kLoopEnd;
  if (leave.size() > 3) return kLoopScan;
  for (size_t k = 0; k < 4; ++k) exits[k] = leave[std::min(k, leave.size() - 1)];
  return kLoopFind;
}

// The runtime's own numbering of a tokenizer DFA's states: the dead state, live
// non-accepting states without a self-loop, then with one, accepting states with one,
// then without. "Accepting" is then one comparison with `accept_floor` and "has a
// self-loop" one with the range [loop_low, loop_high), so the table walk loads nothing
// but the next state for a byte (the blob's order has the first property only).
struct TokenLayout {
  std::vector<uint32_t> next;    // [states << shift] row offsets
  std::vector<int32_t> accept;   // [states]
  std::vector<uint8_t> loop;     // [states] Reps' memo's loop states
  std::vector<uint8_t> mode;     // [states] a TokenLoop
  std::vector<std::array<uint8_t, 4>> exits;  // [states] of kLoopFind states
  uint32_t start = 0, dead = ~0u, accept_floor = 0, loop_low = 0, loop_high = 0;  // rows
};

inline TokenLayout lay_out_token_states(uint32_t states, uint32_t shift, uint32_t start,
                                        uint32_t dead, const uint32_t* next,
                                        const int32_t* accept, const uint8_t* loop,
                                        const uint8_t* byte_class) {
  std::vector<uint8_t> mode(states);
  std::vector<std::array<uint8_t, 4>> exits(states);
  std::vector<int> group(states);
  for (uint32_t s = 0; s < states; ++s) {
    mode[s] = find_token_loop(s << shift, dead, next, byte_class, exits[s]);
    const bool accepting = accept[s] != -1, looping = mode[s] != kLoopNone;  // -1: kNoKind
    group[s] = (s << shift) == dead ? 0 : !accepting ? 1 + looping : 4 - looping;
  }
  std::vector<uint32_t> order(states), renumber(states);
  for (uint32_t s = 0; s < states; ++s) order[s] = s;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return group[a] < group[b]; });
  for (uint32_t k = 0; k < states; ++k) renumber[order[k]] = k;
  TokenLayout out;
  out.next.resize(size_t(states) << shift);
  out.accept.resize(states), out.loop.resize(states);
  out.mode.resize(states), out.exits.resize(states);
  const auto row = [&](uint32_t old_row) { return renumber[old_row >> shift] << shift; };
  for (uint32_t k = 0; k < states; ++k) {
    const uint32_t s = order[k];
    for (uint32_t c = 0; c < (1u << shift); ++c)
      out.next[(size_t(k) << shift) + c] = row(next[(size_t(s) << shift) + c]);
    out.accept[k] = accept[s], out.loop[k] = loop[s];
    out.mode[k] = mode[s], out.exits[k] = exits[s];
  }
  const auto first_of = [&](int g) {  // row of the first state in group g or after it
    uint32_t k = 0;
    while (k < states && group[order[k]] < g) ++k;
    return k << shift;
  };
  out.loop_low = first_of(2), out.accept_floor = first_of(3), out.loop_high = first_of(4);
  out.start = row(start);
  out.dead = dead == ~0u ? ~0u : row(dead);
  return out;
}

// The first position from i where one of `exits` occurs (n when none).
inline size_t find_exit(const uint8_t* data, size_t i, size_t n,
                        const std::array<uint8_t, 4>& exits) {
#if defined(__SSE2__)
  const __m128i a = _mm_set1_epi8(char(exits[0])), b = _mm_set1_epi8(char(exits[1]));
  const __m128i c = _mm_set1_epi8(char(exits[2]));
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i));
    const __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, a), _mm_cmpeq_epi8(v, b)),
                                     _mm_cmpeq_epi8(v, c));
    const int mask = _mm_movemask_epi8(hit);
    if (mask) return i + size_t(__builtin_ctz(unsigned(mask)));
  }
#endif
  while (i < n && data[i] != exits[0] && data[i] != exits[1] && data[i] != exits[2]) ++i;
  return i;
}

}  // namespace v1
}  // namespace parafuse::fsm
