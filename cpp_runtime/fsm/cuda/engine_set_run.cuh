// parafuse boostfsm on GPUs: a pattern set of several engines, as fsm/sets/engine_set.hpp runs
// it on the CPU: every engine over the same input, counts added per tag, matches merged by
// offset, then tag. The input is copied to device memory once (or walked where it is), and
// each engine runs on it: a DFA engine by the GPU's schemes (run.cuh; `auto` chooses per
// engine), an NFA engine bit-parallel (nfa_run.cuh). Prefiltered engines do not run on the
// GPU yet: a set that has one is refused when parsed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "fsm/core/run_result.hpp"
#include "fsm/cuda/nfa_run.cuh"
#include "fsm/sets/engine_directory.hpp"

namespace parafuse::fsm::cuda {

struct GpuSetEngine {
  EngineKind kind = EngineKind::dfa;
  Tables tables;  // DFA engines
  NfaTables nfa;  // NFA engines
};

inline std::vector<GpuSetEngine> parse_gpu_engine_set(const uint8_t* blob, size_t size) {
  const std::vector<EngineEntry> entries = engine_directory(blob, size);
  std::vector<GpuSetEngine> engines(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const EngineEntry& entry = entries[i];
    engines[i].kind = entry.kind;
    if (entry.kind == EngineKind::prefilter)
      throw std::runtime_error("engine " + std::to_string(i) + " of this pattern set is "
                               "prefiltered, which does not run on the GPU yet");
    if (entry.kind == EngineKind::dfa)
      engines[i].tables = parse_tables(blob + entry.offset, entry.bytes);
    else
      engines[i].nfa = parse_nfa(blob + entry.offset, entry.bytes);
  }
  return engines;
}

// `on_device`: `data` is device memory, walked where it is once the device has finished
// what was queued before; else host memory, copied to the device first.
inline SetResult run_engine_set_cuda(const std::vector<GpuSetEngine>& engines, uint32_t tag_count,
                                     const uint8_t* data, size_t n, const RunOptions& options,
                                     bool on_device = false) {
  for (const GpuSetEngine& engine : engines) {  // a bad scheme fails before any work
    std::string ignored;
    if (engine.kind == EngineKind::dfa) gpu_scheme(engine.tables, options.scheme, ignored);
  }
  if (n && on_device) PF_FSM_CUDA(cudaDeviceSynchronize());
  RunStream stream;
  DeviceArray<uint8_t> copy(on_device ? 0 : n);
  copy.upload(data, on_device ? 0 : n, stream);
  const uint8_t* input = on_device ? data : copy.get();
  SetResult result;
  result.counts.assign(tag_count, 0);
  std::vector<std::string> schemes;
  for (size_t i = 0; i < engines.size(); ++i) {
    std::string scheme, reason;
    if (engines[i].kind == EngineKind::dfa) {
      RunResult raw = run_machine_on(engines[i].tables, input, n, options, true, stream);
      result.final_states.push_back(raw.final_state);
      for (uint32_t tag = 0; tag < tag_count; ++tag) result.counts[tag] += raw.counts[tag];
      result.matches.insert(result.matches.end(), raw.matches.begin(), raw.matches.end());
      result.threads = std::max(result.threads, raw.threads);
      scheme = raw.scheme;
      reason = raw.reason;
    } else {
      const NfaTables& nfa = engines[i].nfa;
      NfaRun raw = run_nfa_cuda(nfa, input, n, tag_count, options.chunks, options.matches, stream);
      result.final_states.push_back(-1);
      for (uint32_t tag = 0; tag < tag_count; ++tag) result.counts[tag] += raw.counts[tag];
      result.matches.insert(result.matches.end(), raw.matches.begin(), raw.matches.end());
      scheme = "nfa";
      reason = nfa.bounded()
                   ? "bit-parallel NFA; matches are at most " + std::to_string(nfa.max_length) +
                         " bytes long, so " + std::to_string(raw.chunks) +
                         " chunks start exactly from that much lookback"
                   : "bit-parallel NFA with unbounded matches, run by one device thread";
    }
    if (std::find(schemes.begin(), schemes.end(), scheme) == schemes.end()) schemes.push_back(scheme);
    result.reason += (i ? "; engine " : "engine ") + std::to_string(i) + " (" +
                     kind_name(engines[i].kind) + ", " + scheme + "): " + reason;
  }
  for (size_t i = 0; i < schemes.size(); ++i) result.scheme += (i ? "+" : "") + schemes[i];
  if (options.matches)
    std::sort(result.matches.begin(), result.matches.end(), [](const Match& a, const Match& b) {
      return a.offset != b.offset ? a.offset < b.offset : a.tag < b.tag;
    });
  return result;
}

}  // namespace parafuse::fsm::cuda
