// parafuse boostfsm runtime: literal patterns of a prefiltered engine
// (fsm_compiler/engines/literal_patterns.py): patterns whose matches are a few strings,
// confirmed by comparing the strings at each factor end instead of sweeping an NFA
// (add_literal_ends in fsm/sets/prefilter_engine.hpp). Parsed from the prefilter blob
// (fsm/sets/prefilter_tables.hpp): a count, then per pattern its tag and string count,
// then per string its length L, the bytes after its window and L x 4 words (byte sets).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

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
