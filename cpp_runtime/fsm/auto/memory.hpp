// parafuse boostfsm runtime: what a run asks of auto's probes (ProbeRun), and the choices
// `auto` made earlier in this process, remembered by machine, input size, threads, chunks,
// SIMD option, matches and a hash of the input's sample (fsm/auto/probe.hpp explains).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "fsm/core/shared_constants.hpp"
#include "fsm/core/tables.hpp"

namespace parafuse::fsm {
inline namespace v1 {

// What `auto` runs: a scheme, and for enumeration whether it is the merging scalar
// enumeration (fsm/auto/choice.hpp; run_typed then sets the engine's SIMD path to none).
struct Pick {
  Scheme scheme = Scheme::seq;
  bool merging_enum = false;
};

constexpr size_t kProbeMinInput = size_t(16) << 20;
constexpr size_t kProbeShare = 512, kProbeWindows = 4;
constexpr size_t kProbeMinWindow = size_t(8) << 10, kProbeMaxWindow = size_t(1) << 20;

// kProbeMinInput, or PARAFUSE_FSM_PROBE_MIN_BYTES where set (tests probe small inputs):
// per thread of the run, the least input the probes run on (measured_choice).
inline size_t probe_min_input() {
  const char* text = std::getenv("PARAFUSE_FSM_PROBE_MIN_BYTES");
  return text && *text ? size_t(std::strtoull(text, nullptr, 10)) : kProbeMinInput;
}

constexpr size_t kRememberedChoices = 256;

// FNV-1a over the sample's 8-byte words (and its tail): which input a choice was made on.
inline uint64_t sample_hash(const std::vector<uint8_t>& bytes) {
  uint64_t hash = 0xcbf29ce484222325ull, word = 0;
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    std::memcpy(&word, bytes.data() + i, 8);
    hash = (hash ^ word) * 0x100000001b3ull;
  }
  for (; i < bytes.size(); ++i) hash = (hash ^ bytes[i]) * 0x100000001b3ull;
  return hash;
}

// What a run asks of its probes: the same threads, chunks, SIMD option and matches.
struct ProbeRun {
  int threads = 1;
  size_t chunks = 1;
  std::string simd;
  bool matches = false;
};

// Choices measured earlier in this process, by machine, input size, threads, chunks, SIMD
// option, matches and the sample's hash.
using ChoiceKey =
    std::tuple<const void*, uint32_t, size_t, int, size_t, std::string, bool, uint64_t>;

inline ChoiceKey choice_key(const Tables& t, size_t n, const ProbeRun& run, uint64_t hash) {
  return ChoiceKey{t.table, t.start, n, run.threads, run.chunks, run.simd, run.matches, hash};
}
struct RememberedChoices {
  std::mutex guard;
  std::map<ChoiceKey, std::pair<Pick, std::string>> choices;  // pick, reason
};
inline RememberedChoices& remembered_choices() {
  static RememberedChoices memory;
  return memory;
}

// Which input a choice was made on, cheaply: FNV-1a over kKeyWindowBytes at each of the
// probe sample's kProbeWindows positions, read in place.
constexpr size_t kKeyWindowBytes = 1024;

inline uint64_t choice_hash(const uint8_t* data, size_t n) {
  const size_t window =
      std::clamp(n / kProbeShare / kProbeWindows, kProbeMinWindow, kProbeMaxWindow);
  std::vector<uint8_t> key;
  key.reserve(kProbeWindows * kKeyWindowBytes);
  for (size_t w = 0; w < kProbeWindows; ++w) {
    const size_t begin = (n - std::min(n, window)) * w / (kProbeWindows - 1);
    key.insert(key.end(), data + begin, data + begin + std::min(kKeyWindowBytes, n - begin));
  }
  return sample_hash(key);
}

inline bool remembers(size_t n, const ProbeRun& run) {
  return n >= probe_min_input() && run.chunks >= 2 && n >= kProbeWindows;
}

// The scheme chosen by an earlier run over an input of the same size and sample key, if
// any: then neither the rules nor the probes run again.
inline bool remembered_choice(const Tables& t, const uint8_t* data, size_t n, const ProbeRun& run,
                              Pick& pick, std::string& reason) {
  if (!remembers(n, run)) return false;
  RememberedChoices& memory = remembered_choices();
  {  // a process's first choice: nothing to hash the sample for
    const std::lock_guard<std::mutex> lock(memory.guard);
    if (memory.choices.empty()) return false;
  }
  const ChoiceKey key = choice_key(t, n, run, choice_hash(data, n));
  const std::lock_guard<std::mutex> lock(memory.guard);
  const auto found = memory.choices.find(key);
  if (found == memory.choices.end()) return false;
  pick = found->second.first;
  reason = "as measured by an earlier run in this process over the same sample of an input "
           "of this size (" + found->second.second + ")";
  return true;
}

// Keeps a choice for later runs in this process (remembered_choice): the probes' and the
// choices that the timed kernels or the lookback rule made without probes.
inline void remember_choice(const Tables& t, const uint8_t* data, size_t n, const ProbeRun& run,
                            Pick pick, const std::string& reason) {
  if (!remembers(n, run)) return;
  const ChoiceKey key = choice_key(t, n, run, choice_hash(data, n));
  RememberedChoices& memory = remembered_choices();
  const std::lock_guard<std::mutex> lock(memory.guard);
  if (memory.choices.size() >= kRememberedChoices) memory.choices.clear();
  memory.choices[key] = {pick, reason};
}

}  // namespace v1
}  // namespace parafuse::fsm
