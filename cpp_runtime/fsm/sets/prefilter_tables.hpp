// parafuse boostfsm runtime: the tables of a prefiltered engine (fsm_compiler/engines/
// prefilter_engine.py), parsed from its blob: the literal DFA, and per pattern its factor
// bounds and confirmation NFA. Run by fsm/sets/prefilter_engine.hpp (CPU) and
// fsm/cuda/prefilter.cuh (GPU).
//
// Blob (emitters/fsm/engine_set_blob.py): u64 magic "PFSMPRE2", pattern count P,
// literal DFA offset and size, then P x (tag, reach (all ones: unbounded), shortest, NFA
// offset, NFA size, before[4], longest); offsets from the engine blob's start, 64-byte
// aligned.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "fsm/core/tables.hpp"
#include "fsm/sets/nfa_engine.hpp"

namespace parafuse::fsm {
inline namespace v1 {

// Whether the literal DFA `t` may run in chunks from a lookback: no delayed report and
// no report at the end of the input (neither exists without assertions).
inline bool literal_dfa_chunkable(const Tables& t) {
  for (uint32_t i = 0; i < t.tag_begin[t.states]; ++i)
    if (t.tag_list[i] & kDelayed) return false;
  return t.end_begin[t.states] == 0;
}

constexpr uint64_t kPrefilterMagic = 0x324552504d534650ull;  // "PFSMPRE2"

constexpr size_t kConfirmSlots = 10;

struct ConfirmTables {
  uint32_t tag = 0;
  uint64_t reach = 0, shortest = 0, longest = 0;  // reach all ones: unbounded
  uint64_t before[4] = {0, 0, 0, 0};  // byte set
  NfaTables nfa;
  bool may_precede(uint8_t byte) const { return (before[byte >> 6] >> (byte & 63)) & 1; }
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
    c.longest = entry[9];
    c.nfa = parse_nfa(part(entry[3], entry[4]), entry[4]);
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
