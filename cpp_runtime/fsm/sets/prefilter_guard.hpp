// parafuse boostfsm runtime: the guards of a prefiltered engine's patterns
// (fsm_compiler/engines/guards.py): a literal every match holds near its factor, checked
// before a factor end makes a start range (fsm/sets/prefilter_engine.hpp start_ranges).
// Parsed from the prefilter blob (fsm/sets/prefilter_tables.hpp): a count, then per guard
// its slot count and slots: lo, hi, after, near, gap[4], string count, then per string its
// length L and L x 4 words (byte sets).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace parafuse::fsm {
inline namespace v1 {

inline bool in_byte_set(const uint64_t* set, uint8_t byte) { return (set[byte >> 6] >> (byte & 63)) & 1; }

// The one byte outside `set`, or -1 (none, or several).
inline int only_byte_outside(const uint64_t* set) {
  int outside = 0, byte = -1;
  for (int b = 0; b < 256; ++b)
    if (!in_byte_set(set, uint8_t(b))) ++outside, byte = b;
  return outside == 1 ? byte : -1;
}

// The last position in [from, to) whose byte is `byte`, or from - 1 (memrchr where the C
// library has it).
inline int64_t last_byte_at(const uint8_t* data, int64_t from, int64_t to, int byte) {
  if (to <= from) return from - 1;
#if defined(__GLIBC__)
  const void* found = memrchr(data + from, byte, size_t(to - from));
  return found ? static_cast<const uint8_t*>(found) - data : from - 1;
#else
  while (to > from && data[to - 1] != byte) --to;
  return to - 1;
#endif
}

// A literal every match holds near its factor (fsm_compiler/engines/guards.py): one of
// `strings` ends in [q + lo, q + hi] of the factor's end q, with only `gap` bytes from
// q + near on to it (after) or below q + near down to it (before).
struct Guard {
  static constexpr int64_t kShortWindow = 16;  // ends compared one by one below this many
  int64_t lo = 0, hi = 0, near = 0;
  bool after = true;
  uint64_t gap[4] = {0, 0, 0, 0};
  std::vector<std::vector<uint64_t>> strings;  // 4 words (a byte set) per byte

  // Whether data[0, n) holds the guard for the factor end q.
  bool holds(const uint8_t* data, uint64_t n, uint64_t q) const {
    const int64_t at = int64_t(q);
    int64_t first = std::max<int64_t>(0, at + lo), last = std::min<int64_t>(int64_t(n), at + hi);
    if (gap_everything) {  // any byte may lie between: the window alone
    } else if (after) {  // a string starts no later than the first byte outside the gap
      const int64_t p = std::max<int64_t>(0, at + near);
      last = std::min<int64_t>(last, gap_end(data, p, last) + longest);
    } else {  // a string ends after the last byte outside the gap below q + near
      const int64_t below = std::min<int64_t>(int64_t(n), at + near);
      const int64_t floor = std::max<int64_t>(0, first);
      int64_t p = below - 1;
      if (only_outside >= 0)
        p = last_byte_at(data, floor, below, only_outside);
      else
        while (p >= floor && in_gap[data[p]]) --p;
      first = std::max<int64_t>(first, p + 1);
    }
    first = std::max<int64_t>(first, shortest);
    if (first > last) return false;
    // Strings without a byte of their own, or all in a window too short for memchr to
    // pay: every end in the window, one table load a position for them all.
    const uint64_t compared = last - first < kShortWindow ? every_string : unanchored;
    if (compared != 0)
      for (int64_t e = first; e <= last; ++e)
        for (uint64_t m = ending[data[e - 1]] & compared; m != 0; m &= m - 1) {
          const size_t k = size_t(__builtin_ctzll(m));
          if (e >= int64_t(strings[k].size() / 4) && ends_at_string(strings[k], data, uint64_t(e)))
            return true;
        }
    for (size_t k = 0; k < strings.size(); ++k) {
      if ((compared >> k) & 1) continue;
      // its byte r is at e - length + r: memchr for it over the window's positions
      const int64_t length = int64_t(strings[k].size() / 4), r = int64_t(anchors[k]);
      int64_t from = std::max(first, length) - length + r;
      const int64_t to = last - length + r;  // inclusive
      while (from <= to) {
        const void* found = std::memchr(data + from, anchor_bytes[k], size_t(to - from + 1));
        if (!found) break;
        const int64_t at = static_cast<const uint8_t*>(found) - data;
        if (ends_at_string(strings[k], data, uint64_t(at - r + length))) return true;
        from = at + 1;
      }
    }
    return false;
  }

  static bool ends_at_string(const std::vector<uint64_t>& string, const uint8_t* data,
                             uint64_t e) {
    const size_t length = string.size() / 4;
    size_t j = length;
    while (j > 0 && in_byte_set(string.data() + 4 * (j - 1), data[e - length + j - 1])) --j;
    return j == 0;
  }

  // The first byte at or after p (before `stop`) outside the gap, else `stop`; memchr
  // where one byte is outside it (`.`: the newline).
  int64_t gap_end(const uint8_t* data, int64_t p, int64_t stop) const {
    if (p >= stop) return stop;
    if (only_outside >= 0) {
      const void* found = std::memchr(data + p, only_outside, size_t(stop - p));
      return found ? static_cast<const uint8_t*>(found) - data : stop;
    }
    while (p < stop && in_gap[data[p]]) ++p;
    return p;
  }

  // Derived on parsing: the gap as a byte table, whether it holds every byte, the one
  // byte outside it (-1: not one),
  // the strings' shortest and longest lengths, and per string the byte searched for (-1:
  // none) and its index: the first byte whose set is one byte, preferring one that is not a
  // lower-case letter or a space (rarer in text); per byte, the strings whose last set
  // holds it (bit k: string k); the strings as bits, and those with no byte searched for.
  bool in_gap[256] = {};
  bool gap_everything = false;
  int only_outside = -1;
  int64_t shortest = 0, longest = 0;
  std::vector<int> anchor_bytes;
  std::vector<size_t> anchors;
  uint64_t ending[256] = {};
  uint64_t every_string = 0, unanchored = 0;

  void prepare() {
    gap_everything = true;
    for (int b = 0; b < 256; ++b) {
      in_gap[b] = in_byte_set(gap, uint8_t(b));
      gap_everything = gap_everything && in_gap[b];
    }
    only_outside = only_byte_outside(gap);
    shortest = int64_t(strings.front().size() / 4);
    for (size_t k = 0; k < strings.size(); ++k) {
      const std::vector<uint64_t>& string = strings[k];
      shortest = std::min(shortest, int64_t(string.size() / 4));
      longest = std::max(longest, int64_t(string.size() / 4));
      for (int b = 0; b < 256; ++b)
        if (in_byte_set(string.data() + string.size() - 4, uint8_t(b))) ending[b] |= 1ull << k;
    }
    every_string = strings.size() == 64 ? ~0ull : (1ull << strings.size()) - 1;
    choose_anchors();
    for (size_t k = 0; k < strings.size(); ++k)
      if (anchor_bytes[k] < 0) unanchored |= 1ull << k;
  }

  void choose_anchors() {
    for (const std::vector<uint64_t>& string : strings) {
      int best = -1;
      size_t index = 0;
      for (size_t j = 0; j < string.size() / 4; ++j) {
        int count = 0, byte = -1;
        for (int w = 0; w < 4; ++w) count += __builtin_popcountll(string[4 * j + size_t(w)]);
        if (count != 1) continue;
        for (int b = 0; b < 256; ++b)
          if (in_byte_set(string.data() + 4 * j, uint8_t(b))) byte = b;
        const bool common = (byte >= 'a' && byte <= 'z') || byte == ' ';
        if (best < 0 || (!common && ((best >= 'a' && best <= 'z') || best == ' '))) {
          best = byte;
          index = j;
        }
      }
      anchor_bytes.push_back(best);
      anchors.push_back(index);
    }
  }

};

constexpr size_t kGuardStrings = 64;  // strings a guard may hold (a bit each in Guard::ending)

inline Guard parse_guard(const uint8_t* blob, size_t size);

inline std::vector<Guard> parse_guards(const uint8_t* blob, size_t size) {
  const uint64_t* slots = reinterpret_cast<const uint64_t*>(blob);
  const size_t words = size / 8;
  std::vector<Guard> guards;
  size_t at = 1;
  for (uint64_t k = 0; words > 0 && k < slots[0]; ++k) {
    if (at >= words || slots[at] > words - at - 1)
      throw std::runtime_error("prefilter blob: corrupt guard");
    guards.push_back(parse_guard(blob + 8 * (at + 1), 8 * slots[at]));
    at += 1 + slots[at];
  }
  if (words == 0 || guards.empty()) throw std::runtime_error("prefilter blob: corrupt guard");
  return guards;
}

inline Guard parse_guard(const uint8_t* blob, size_t size) {
  const uint64_t* slots = reinterpret_cast<const uint64_t*>(blob);
  const size_t words = size / 8;
  if (words < 9) throw std::runtime_error("prefilter blob: corrupt guard");
  Guard g;
  g.lo = int64_t(slots[0]), g.hi = int64_t(slots[1]), g.after = slots[2] != 0;
  g.near = int64_t(slots[3]);
  std::copy(slots + 4, slots + 8, g.gap);
  size_t at = 9;
  for (uint64_t k = 0; k < slots[8]; ++k) {
    if (at >= words || slots[at] == 0 || (words - at - 1) / 4 < slots[at])
      throw std::runtime_error("prefilter blob: corrupt guard");
    g.strings.emplace_back(slots + at + 1, slots + at + 1 + 4 * slots[at]);
    at += 1 + 4 * slots[at];
  }
  if (g.strings.empty() || g.strings.size() > kGuardStrings || g.lo > g.hi)
    throw std::runtime_error("prefilter blob: corrupt guard");
  g.prepare();
  return g;
}

}  // namespace v1
}  // namespace parafuse::fsm
