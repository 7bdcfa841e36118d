// parafuse boostfsm runtime: the directory of an engine-set blob (emitters/fsm/
// engine_set_blob.py): u64 magic "PFSMSET1", engine count, then per engine (kind: 0 DFA /
// 1 NFA / 2 prefiltered, offset, size); each engine's blob 64-byte aligned; and the engines
// it holds, parsed. Read by fsm/sets/engine_set.hpp (CPU, which adds the SIMD kernels) and
// fsm/cuda/engine_set_run.cuh (GPU).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "fsm/core/tables.hpp"
#include "fsm/sets/nfa_engine.hpp"
#include "fsm/sets/prefilter_tables.hpp"

namespace parafuse::fsm {
inline namespace v1 {

constexpr uint64_t kSetMagic = 0x315445534d534650ull;  // "PFSMSET1"

enum class EngineKind : uint64_t { dfa = 0, nfa = 1, prefilter = 2 };

inline const char* kind_name(EngineKind kind) {
  return kind == EngineKind::dfa ? "dfa" : kind == EngineKind::nfa ? "nfa" : "prefilter";
}

struct EngineEntry {
  EngineKind kind = EngineKind::dfa;
  uint64_t offset = 0, bytes = 0;  // the engine's blob within the set's
};

inline std::vector<EngineEntry> engine_directory(const uint8_t* blob, size_t size) {
  const uint64_t* words = reinterpret_cast<const uint64_t*>(blob);
  if (size < 16 || words[0] != kSetMagic) throw std::runtime_error("not a parafuse engine set");
  const uint64_t count = words[1];
  if ((size - 16) / 24 < count) throw std::runtime_error("engine set: truncated directory");
  std::vector<EngineEntry> entries(count);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t kind = words[2 + 3 * i], offset = words[3 + 3 * i], bytes = words[4 + 3 * i];
    if (offset > size || bytes > size - offset)
      throw std::runtime_error("engine set: engine past the end");
    if (kind > 2) throw std::runtime_error("engine set: unknown engine kind");
    entries[i] = EngineEntry{EngineKind(kind), offset, bytes};
  }
  return entries;
}

struct SetEngine {
  EngineKind kind = EngineKind::dfa;
  Tables tables;              // DFA engines
  NfaTables nfa;              // NFA engines
  PrefilterTables prefilter;  // prefiltered engines
  bool is_dfa() const { return kind == EngineKind::dfa; }
};

// Every engine of the set, parsed (views of `blob`, which must outlive them).
inline std::vector<SetEngine> parse_set_engines(const uint8_t* blob, size_t size) {
  const std::vector<EngineEntry> entries = engine_directory(blob, size);
  std::vector<SetEngine> engines(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const EngineEntry& entry = entries[i];
    engines[i].kind = entry.kind;
    if (entry.kind == EngineKind::dfa)
      engines[i].tables = parse_tables(blob + entry.offset, entry.bytes);
    else if (entry.kind == EngineKind::nfa)
      engines[i].nfa = parse_nfa(blob + entry.offset, entry.bytes);
    else
      engines[i].prefilter = parse_prefilter(blob + entry.offset, entry.bytes);
  }
  return engines;
}

}  // namespace v1
}  // namespace parafuse::fsm
