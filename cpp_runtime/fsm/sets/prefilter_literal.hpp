// parafuse boostfsm runtime: literal patterns of a prefiltered engine
// (fsm_compiler/engines/literal_patterns.py): patterns whose matches are a few strings,
// confirmed by comparing the strings at each factor end instead of sweeping an NFA.
// Parsed from the prefilter blob (fsm/sets/prefilter_tables.hpp): a count, then per
// pattern its tag and string count, then per string its length L, the bytes after its
// window and L x 4 words (byte sets).
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "fsm/core/match.hpp"
#include "fsm/sets/prefilter_guard.hpp"

namespace parafuse::fsm {
inline namespace v1 {

struct LiteralString {
  uint64_t after = 0;           // bytes of the string after its window (the factor)
  std::vector<uint64_t> sets;   // 4 words (a byte set) per byte
};

struct LiteralPattern {
  uint32_t tag = 0;
  std::vector<LiteralString> strings;
};

struct LiteralMatches {
  std::vector<std::pair<uint32_t, uint64_t>> counts;  // (tag, matches)
  std::vector<Match> matches;  // with_matches only
};

// The matches of literal patterns from their factor ends [end, last_end) (sorted): each
// string s compared ending at q + after(s); ends found twice are counted once.
inline void literal_matches(const std::vector<LiteralPattern>& patterns, const uint8_t* data,
                            uint64_t n, const uint64_t* end, const uint64_t* last_end,
                            bool with_matches, LiteralMatches& out) {
  std::vector<uint64_t> found;
  for (const LiteralPattern& pattern : patterns) {
    found.clear();
    bool sorted = true;
    for (const uint64_t* q = end; q != last_end; ++q)
      for (const LiteralString& s : pattern.strings) {
        const uint64_t e = *q + s.after, length = s.sets.size() / 4;
        if (e > n || e < length || !Guard::ends_at_string(s.sets, data, e)) continue;
        if (found.empty() || found.back() < e) {
          found.push_back(e);
        } else if (found.back() != e) {
          sorted = false;
          found.push_back(e);
        }
      }
    if (!sorted) {
      std::sort(found.begin(), found.end());
      found.erase(std::unique(found.begin(), found.end()), found.end());
    }
    out.counts.emplace_back(pattern.tag, found.size());
    if (with_matches)
      for (uint64_t e : found) out.matches.push_back(Match{e, pattern.tag});
  }
}

inline std::vector<LiteralPattern> parse_literals(const uint8_t* blob, size_t size) {
  const uint64_t* slots = reinterpret_cast<const uint64_t*>(blob);
  const size_t words = size / 8;
  const auto corrupt = [] { return std::runtime_error("prefilter blob: corrupt literals"); };
  if (words == 0 || slots[0] == 0) throw corrupt();
  std::vector<LiteralPattern> patterns;
  size_t at = 1;
  for (uint64_t k = 0; k < slots[0]; ++k) {
    if (words - at < 2 || slots[at + 1] == 0) throw corrupt();
    LiteralPattern pattern;
    pattern.tag = uint32_t(slots[at]);
    const uint64_t strings = slots[at + 1];
    at += 2;
    for (uint64_t i = 0; i < strings; ++i) {
      if (words - at < 2) throw corrupt();
      const uint64_t length = slots[at], after = slots[at + 1];
      if (length == 0 || after >= length || (words - at - 2) / 4 < length) throw corrupt();
      pattern.strings.push_back(
          LiteralString{after, std::vector<uint64_t>(slots + at + 2, slots + at + 2 + 4 * length)});
      at += 2 + 4 * length;
    }
    patterns.push_back(std::move(pattern));
  }
  return patterns;
}

}  // namespace v1
}  // namespace parafuse::fsm
