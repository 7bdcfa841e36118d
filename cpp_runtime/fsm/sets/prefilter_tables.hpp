// parafuse boostfsm runtime: the tables of a prefiltered engine (fsm_compiler/engines/
// prefilter_engine.py), parsed from its blob: the literal DFA, and per pattern its factor
// bounds and confirmation NFA. Run by fsm/sets/prefilter_engine.hpp (CPU) and
// fsm/cuda/prefilter.cuh (GPU).
//
// Blob (emitters/fsm/engine_set_blob.py): u64 magic "PFSMPRE4", pattern count P,
// literal DFA offset and size, then P x (tag, reach (all ones: unbounded), shortest, NFA
// offset, NFA size, before[4], longest, guards offset and size, literals offset and size
// (size 0: none)); offsets from the engine blob's start, 64-byte aligned. Guards:
// fsm/sets/prefilter_guard.hpp; literals: fsm/sets/prefilter_literal.hpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "fsm/core/tables.hpp"
#include "fsm/sets/nfa_engine.hpp"
#include "fsm/sets/prefilter_guard.hpp"
#include "fsm/sets/prefilter_literal.hpp"

namespace parafuse::fsm {
inline namespace v1 {

// Whether the literal DFA `t` may run in chunks from a lookback: no delayed report and
// no report at the end of the input (neither exists without assertions).
inline bool literal_dfa_chunkable(const Tables& t) {
  for (uint32_t i = 0; i < t.tag_begin[t.states]; ++i)
    if (t.tag_list[i] & kDelayed) return false;
  return t.end_begin[t.states] == 0;
}

constexpr uint64_t kPrefilterMagic = 0x344552504d534650ull;  // "PFSMPRE4"

constexpr size_t kConfirmSlots = 14;

struct ConfirmTables {
  uint32_t tag = 0;
  uint64_t reach = 0, shortest = 0, longest = 0;  // reach all ones: unbounded
  uint64_t before[4] = {0, 0, 0, 0};  // byte set
  NfaTables nfa;
  std::vector<Guard> guards;  // one a pattern confirmed (none: every factor end counts)
  std::vector<LiteralPattern> literals;  // every pattern's strings (none: the NFA confirms)
  int only_not_before = -1;  // the one byte outside `before` (-1: none or several)
  bool may_precede(uint8_t byte) const { return in_byte_set(before, byte); }
  // Whether a match of one of the patterns may start from the factor end q.
  bool guards_pass(const uint8_t* data, uint64_t n, uint64_t q) const {
    if (guards.empty()) return true;
    for (const Guard& guard : guards)
      if (guard.holds(data, n, q)) return true;
    return false;
  }
};

struct PrefilterTables {
  Tables literals;
  std::vector<ConfirmTables> confirms;
  uint64_t longest = 1;  // bytes in the longest factor
};

inline PrefilterTables parse_prefilter(const uint8_t* blob, size_t size) {
  const uint64_t* slots = reinterpret_cast<const uint64_t*>(blob);
  if (size < 32 || slots[0] != kPrefilterMagic)
    throw std::runtime_error("not a parafuse prefilter blob");
  const uint64_t count = slots[1];
  if (count >= (uint64_t(1) << 16)) throw std::runtime_error("prefilter blob: too many patterns");
  if (size < 32 + 8 * kConfirmSlots * count) throw std::runtime_error("prefilter blob: truncated");
  const auto part = [&](uint64_t offset, uint64_t bytes) {
    if (offset > size || bytes > size - offset) throw std::runtime_error("prefilter blob: corrupt");
    return blob + offset;
  };
  PrefilterTables p;
  p.literals = parse_tables(part(slots[2], slots[3]), slots[3]);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t* entry = slots + 4 + kConfirmSlots * i;
    ConfirmTables c;
    c.tag = uint32_t(entry[0]);
    c.reach = entry[1];
    c.shortest = entry[2];
    std::copy(entry + 5, entry + 9, c.before);
    c.only_not_before = only_byte_outside(c.before);
    c.longest = entry[9];
    c.nfa = parse_nfa(part(entry[3], entry[4]), entry[4]);
    if (entry[11] != 0) c.guards = parse_guards(part(entry[10], entry[11]), entry[11]);
    if (entry[13] != 0) c.literals = parse_literals(part(entry[12], entry[13]), entry[13]);
    if (c.nfa.empty_accepts || c.shortest == 0 || c.shortest > c.reach || c.longest < c.shortest)
      throw std::runtime_error("prefilter blob: a pattern without a factor");
    p.longest = std::max(p.longest, c.longest);
    p.confirms.push_back(c);
  }
  if (!literal_dfa_chunkable(p.literals))
    throw std::runtime_error("prefilter blob: a literal DFA with delayed or end-of-input reports");
  return p;
}

}  // namespace v1
}  // namespace parafuse::fsm
