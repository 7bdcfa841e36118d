// parafuse boostfsm on GPUs: a pattern set of several engines, as fsm/sets/engine_set.hpp runs
// it on the CPU: every engine over the same input, counts added per tag, matches merged by
// offset, then tag. The input is copied to device memory once (or walked where it is), and
// each engine runs on it: a DFA engine by the GPU's schemes (run.cuh; `auto` chooses per
// engine), an NFA engine bit-parallel (nfa_run.cuh), a prefiltered engine by its literal DFA
// and its patterns' confirmations (prefilter.cuh).
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "fsm/core/run_result.hpp"
#include "fsm/cuda/nfa_run.cuh"
#include "fsm/cuda/prefilter.cuh"
#include "fsm/sets/engine_directory.hpp"
#include "fsm/sets/set_merge.hpp"

namespace parafuse::fsm::cuda {

// `on_device`: `data` is device memory, walked where it is once the device has finished
// what was queued before; else host memory, copied to the device first.
inline SetResult run_engine_set_cuda(const std::vector<SetEngine>& engines, uint32_t tag_count,
                                     const uint8_t* data, size_t n, const RunOptions& options,
                                     bool on_device = false) {
  for (const SetEngine& engine : engines) {  // a bad scheme fails before any work
    std::string ignored;
    if (engine.kind != EngineKind::nfa)
      gpu_plan(engine.kind == EngineKind::dfa ? engine.tables : engine.prefilter.literals,
               options.scheme, ignored);
  }
  if (n && on_device) PF_FSM_CUDA(cudaDeviceSynchronize());
  RunStream stream;
  DeviceArray<uint8_t> copy(on_device ? 0 : n);
  copy.upload(data, on_device ? 0 : n, stream);
  const uint8_t* input = on_device ? data : copy.get();
  SetResult result;
  SetMerge merge(result, tag_count);
  for (size_t i = 0; i < engines.size(); ++i) {
    if (engines[i].kind == EngineKind::dfa) {
      const RunResult raw = run_machine_on(engines[i].tables, input, n, options, true, stream);
      result.threads = std::max(result.threads, raw.threads);
      merge.add(i, engines[i].kind, raw.final_state, raw.counts, raw.matches, raw.scheme,
                raw.reason);
    } else if (engines[i].kind == EngineKind::prefilter) {
      std::string scheme, reason;
      const NfaRun raw = run_prefilter_cuda(engines[i].prefilter, input, n, tag_count, options,
                                            stream, scheme, reason);
      merge.add(i, engines[i].kind, -1, raw.counts, raw.matches, scheme, reason);
    } else {
      const NfaTables& nfa = engines[i].nfa;
      const NfaRun raw =
          run_nfa_cuda(nfa, input, n, tag_count, options.chunks, options.matches, stream);
      merge.add(i, engines[i].kind, -1, raw.counts, raw.matches, "nfa",
                nfa_reason(nfa, raw.chunks, "run by one device thread"));
    }
  }
  merge.finish();
  return result;
}

}  // namespace parafuse::fsm::cuda
