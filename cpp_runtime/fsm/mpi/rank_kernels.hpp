// parafuse boostfsm runtime: what an MPI rank computes, as a table of functions.
//
// A machine's library (src/M.cpp) compiles the runtime's schemes once, for its own entry
// width, and hands this table to its MPI library (src/M_mpi.cpp), whose code
// (fsm/mpi/run.hpp, fsm/mpi/engine_set.hpp) then calls the runtime only through it: the
// MPI library compiles the MPI code around the calls and nothing of the schemes. Before,
// M_mpi.cpp called the runtime directly and compiled every scheme, entry width and SIMD
// kernel a second time, as long a compile as M.cpp's.
//
// Including this header costs parsing only: code is generated where a table is built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "fsm/auto/choice.hpp"
#include "fsm/sets/engine_set.hpp"
#include "fsm/simd/range_summary.hpp"

namespace parafuse::fsm {
inline namespace v1 {

struct RankKernels {
  RunResult (*run_machine)(const Tables&, const uint8_t*, size_t, const RunOptions&) = nullptr;
  SimdPlan (*plan_for_tables)(const Tables&, const std::string& simd) = nullptr;
  RangeSummary (*summarize_range)(const Tables&, const SimdPlan&, const uint8_t*, size_t,
                                  int threads, bool count) = nullptr;
  // Pattern sets only (null in a library of one machine):
  void (*nfa_scan)(const NfaTables&, const uint8_t*, size_t n, size_t scan, size_t begin,
                   size_t end, bool with_matches, NfaChunk&) = nullptr;
  PrefilterResult (*run_prefilter)(const PrefilterTables&, const uint8_t*, size_t,
                                   uint32_t tag_count, const RunOptions&, int threads,
                                   size_t chunks) = nullptr;
};

// The table of a machine whose transition entries are `Entry` (its blob says which:
// Tables::entry_bytes), instantiating the schemes for that width alone.
template <class Entry>
RankKernels machine_rank_kernels() {
  RankKernels kernels;
  kernels.run_machine = &run_machine_with<Entry>;
  kernels.plan_for_tables = &plan_for_tables;
  kernels.summarize_range = &summarize_range;
  return kernels;
}

// The table of a pattern set whose DFA engines' tables have the entry widths Widths
// (fsm/sets/entry_widths.hpp).
template <class Widths>
RankKernels engine_set_rank_kernels() {
  RankKernels kernels;
  kernels.run_machine = &Widths::run;
  kernels.plan_for_tables = &plan_for_tables;
  kernels.summarize_range = &summarize_range;
  kernels.nfa_scan = &nfa_scan;
  kernels.run_prefilter = &run_prefilter<Widths>;
  return kernels;
}

}  // namespace v1
}  // namespace parafuse::fsm
