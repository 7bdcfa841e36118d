// parafuse boostfsm runtime: a pattern set compiled to several engines (DFAs, each run
// with the schemes of fsm/auto/choice.hpp; bit-parallel NFAs, fsm/sets/nfa_engine.hpp; and
// prefiltered engines, fsm/sets/prefilter_engine.hpp) over the same input. Counts add up per
// tag; matches merge by offset, then tag.
// The container blob: fsm/sets/engine_directory.hpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "fsm/auto/choice.hpp"
#include "fsm/sets/engine_directory.hpp"
#include "fsm/sets/entry_widths.hpp"
#include "fsm/sets/lazy_nfa.hpp"
#include "fsm/sets/nfa_engine.hpp"
#include "fsm/sets/prefilter_engine.hpp"
#include "fsm/sets/set_merge.hpp"

namespace parafuse::fsm {
inline namespace v1 {


// `kernels`: the SIMD kernels the library compiled for its DFA engines and prefilters'
// literal DFAs, one per distinct fit of their plans (or every plan's: the engine-set
// driver, whose blobs vary); each DFA gets the first that fits it (fsm/simd/plan.hpp
// simd_kernels_for). (Every plan's kernels for every set would take 40-55 s of CPU to
// compile.)
inline std::vector<SetEngine> parse_engine_set(const uint8_t* blob, size_t size,
                                               const std::vector<const SimdKernels*>& kernels) {
  std::vector<SetEngine> engines = parse_set_engines(blob, size);
  for (SetEngine& engine : engines) {
    engine.tables.simd_kernels = simd_kernels_for(engine.tables, kernels);
    engine.prefilter.literals.simd_kernels = simd_kernels_for(engine.prefilter.literals, kernels);
  }
  return engines;
}

inline void append_phases(std::vector<PhaseTiming>& all, const std::vector<PhaseTiming>& phases,
                          size_t engine) {
  for (const PhaseTiming& phase : phases)
    all.push_back(PhaseTiming{"engine " + std::to_string(engine) + ": " + phase.name,
                              phase.parallel, phase.seconds, phase.units});
}

// Runs every engine with `options` (the scheme applies to every DFA engine; `auto`
// chooses per engine) and merges the results. Widths: the entry widths of the DFA
// engines' tables (fsm/sets/entry_widths.hpp).
template <class Widths = AllEntryWidths>
SetResult run_engine_set(const std::vector<SetEngine>& engines, uint32_t tag_count,
                         const uint8_t* data, size_t n, const RunOptions& options) {
  if (!known_scheme(options.scheme) || options.threads < 0 || options.threads > kMostThreads ||
      options.chunks > kMaxChunks)
    Widths::run(Tables(), data, 0, options);  // throws its std::invalid_argument
  const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
  const size_t chunks = options.chunks ? options.chunks : size_t(threads) * kLanes;
  SetResult result;
  result.threads = threads;
  SetMerge merge(result, tag_count);
  for (size_t i = 0; i < engines.size(); ++i) {
    if (engines[i].kind == EngineKind::prefilter) {
      PrefilterResult raw = run_prefilter<Widths>(engines[i].prefilter, data, n, tag_count, options,
                                          threads, chunks);
      append_phases(result.phases, raw.phases, i);
      merge.add(i, engines[i].kind, -1, raw.counts,
                options.matches ? raw.matches : std::vector<Match>(), raw.scheme, raw.reason);
    } else if (engines[i].is_dfa()) {
      RunResult raw = Widths::run(engines[i].tables, data, n, options);
      append_phases(result.phases, raw.phases, i);
      merge.add(i, engines[i].kind, raw.final_state, raw.counts, raw.matches, raw.scheme,
                raw.reason);
    } else {
      const NfaTables& nfa = engines[i].nfa;
      NfaResult raw = run_nfa(nfa, data, n, tag_count, threads, chunks, options.matches);
      if (options.profile)
        result.phases.push_back(PhaseTiming{"engine " + std::to_string(i) + ": nfa",
                                            nfa.bounded(), raw.seconds, raw.units});
      merge.add(i, engines[i].kind, -1, raw.counts, raw.matches, "nfa",
                nfa_reason(nfa, raw.chunks, "run in one sequential pass"));
    }
  }
  merge.finish();
  return result;
}

}  // namespace v1
}  // namespace parafuse::fsm
