// parafuse boostfsm runtime: the engine every scheme runs on. It splits the input
// into chunks, runs groups of up to kLanes chunks per thread, counts or matches from
// known chunk starts, composes chunk results, and sums the threads' histograms.
// The schemes (fsm/core/schemes.hpp) and `auto` (fsm/auto/choice.hpp) define the rest of
// Engine's members; include fsm/auto/choice.hpp to run a machine.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fsm/core/count.hpp"
#include "fsm/core/run_limits.hpp"
#include "fsm/core/run_result.hpp"
#include "fsm/core/tables.hpp"
#include "fsm/core/walk.hpp"
#include "fsm/simd/plan.hpp"

namespace parafuse::fsm {
inline namespace v1 {

// auto's timed kernels over one window of the input (fsm/auto/rates.hpp): bytes per
// second of one core; 0 where not measured.
struct KernelRates {
  double simd = 0;    // SIMD enumeration counting the plan's groups, kLanes chunks in lockstep
  double walks = 0;   // kLanes interleaved counting walks of the machine's table
  double single = 0;  // one counting walk (seq's kernel)
  int rounds = 0;     // rounds timed (fewer than kRateRounds where decisive or budgeted)
};

struct Chunk {
  size_t begin = 0, end = 0;
  uint32_t start = 0, finish = 0;  // offsets: the start used, the state after the chunk
  std::vector<Match> matches;
  std::vector<uint32_t> map;       // enum: finish offset per internal start state
  uint32_t fused = 0;              // fused: the fused offset after the chunk
  std::vector<uint32_t> fused_hist;  // empty when the chunk is too short to be worth one
  bool fused_walked = false;
  size_t miss_at = kNoMiss;
  size_t met_at = kNoMiss;  // enum: paths from every state met after met_at bytes, at met_state
  uint32_t met_state = 0;
  size_t length() const { return end - begin; }
};

template <class Entry>
class Engine {
 public:
  Engine(const Tables& t, const uint8_t* data, size_t n, int threads)
      : t_(t), m_(t), data_(data), n_(n), threads_(threads),
        totals_(size_t(threads)),
        dense_(size_t(threads)), modes_(size_t(threads), 0), all_states_(t.states) {
    for (uint32_t s = 0; s < t.states; ++s) all_states_[s] = s << t.shift;
    if (t.reporting_states() <= kPackedStates) {
      inc_.assign(t.states, 0);
      for (uint32_t s = t.report_floor; s < t.states; ++s) inc_[s] = uint64_t(1) << (8 * (s - t.report_floor));
    }
  }

  std::string run_scheme(Scheme scheme, size_t chunks, bool matches);  // not automatic
  void probe_speculation(size_t chunks, bool matches, std::vector<PhaseTiming>& spec,
                         std::vector<PhaseTiming>& hspec);  // auto's probes (schemes.hpp)
  Scheme choose(size_t chunks, std::string& reason);  // auto's rules
  void finish(RunResult& result) const;

 private:
  const Tables& t_;
  TypedTable<Entry> m_;
  const uint8_t* data_;
  size_t n_;
  int threads_;
  bool matches_ = false;
  std::vector<Chunk> chunks_;
  uint32_t final_ = 0;
  // Visits of reporting states, per thread: runs from known starts add theirs, and so
  // do speculative runs, whose misspeculated prefixes are corrected by differences.
  std::vector<std::vector<uint64_t>> totals_;
  std::vector<std::vector<uint32_t>> dense_;  // per thread, allocated on first use
  std::vector<uint32_t> modes_;               // per thread: the counting modes used
  std::vector<uint64_t> inc_;                 // packed counting's increments (count.hpp)
  std::vector<uint32_t> all_states_;          // every state's offset
  // This thread's slot in the per-thread vectors. An engine of one thread may run inside
  // another parallel region (auto's probes run schemes side by side: fsm/auto/probe.hpp),
  // where omp_get_thread_num() outside the engine's own regions is the outer thread's.
  size_t slot() const { return threads_ > 1 ? size_t(omp_get_thread_num()) : 0; }
  uint64_t* totals() {  // allocated by the thread that uses it, inside the timed phases
    std::vector<uint64_t>& mine = totals_[slot()];
    if (mine.empty()) mine.assign(std::max<uint32_t>(1, t_.reporting_states()), 0);
    return mine.data();
  }
  Counters counters();

  void split(size_t count);
  std::vector<size_t> all_from(size_t first) const;
  template <class Body>
  void each_group(const std::vector<size_t>& ids, Body&& body, const char* phase = "walk");
  template <class Body>
  void sequential(const char* phase, Body&& body);
  std::vector<PhaseTiming> phases_;
 public:
  bool profile_ = false;
  std::string simd_;  // RunOptions::simd
  bool wants_matches_ = false;  // RunOptions::matches, for auto's rules
  bool speculation_hopeless_ = false;  // auto: most guesses wrong, none met the truth soon
  bool decided_by_rates_ = false;  // auto: decided by the timed kernels alone (fsm/auto/rates.hpp)
  bool decided_by_lookback_ = false;  // auto: lookback right almost always: spec, no probes
  KernelRates rates_;               // auto: the timed kernels, where they ran
  bool merging_enum_ = false;       // auto: enum runs as the merging scalar enumeration
  uint64_t prediction_lookups_done_ = 0;  // spec, hspec: the lookups their predictions took
  volatile uint8_t touch_sink_ = 0;  // auto: bytes read only to fault their pages in
  // auto's timed walks and probes (fsm/auto/rates.hpp, probe.hpp; one thread): the counting
  // mode their first block takes, and where their last block's choice is kept
  // (Counters::first, ::settled)
  Counting counting_from_ = Counting::sparse;
  Counting* counting_settled_ = nullptr;
  Counting rates_counting_ = Counting::sparse;  // the mode kernel_rates' warm walk settled in
  double parallel_choose_seconds_ = 0;  // auto: the parallel parts of choosing
  std::vector<PhaseTiming>& phases() { return phases_; }
 private:
  void walk_known(const std::vector<size_t>& ids);  // count (or match) from chunk.start
  void walk_group(const size_t* ids, int count, bool with_matches);
  std::string run_seq();
  std::string run_enum();
  SimdPlan simd_plan() const;                      // fsm/simd/enum.hpp
  std::string run_simd_enum(const SimdPlan& plan);  // fsm/simd/enum.hpp
  std::string run_fused();
  std::string run_speculative(bool higher_order);
  uint32_t predict(const Chunk& chunk, Enumerator& paths);
  void predict_and_walk(const std::vector<size_t>& ids);
  uint64_t fix(Chunk& chunk, uint32_t true_start);
  uint64_t validate_in_order();
  uint64_t validate_in_rounds(size_t& rounds);
  void recount_fused(Chunk& chunk);
  void enumerate(Chunk& chunk, Enumerator& paths, const uint32_t* starts, size_t skip);
  double sampled_accuracy(size_t& slow_misses, size_t& sampled);
  bool fused_stays_on_sample();
  bool paths_meet_on_sample();
  bool simd_counts_in_one_pass(const SimdPlan& plan, size_t chunks) const;  // fsm/auto/rates.hpp
  KernelRates kernel_rates(const SimdPlan& plan);                           // fsm/auto/rates.hpp
  double single_walk_rate();                                                // fsm/auto/rates.hpp
  size_t rate_window() const;                                               // fsm/auto/rates.hpp
  uint32_t compose_known_starts();
};

template <class Entry>
void Engine<Entry>::split(size_t count) {
  chunks_.assign(count, Chunk{});
  for (size_t i = 0; i < count; ++i) {
    chunks_[i].begin = size_t((unsigned __int128)n_ * i / count);
    chunks_[i].end = size_t((unsigned __int128)n_ * (i + 1) / count);
  }
  chunks_[0].start = t_.start << t_.shift;
}

template <class Entry>
std::vector<size_t> Engine<Entry>::all_from(size_t first) const {
  std::vector<size_t> ids;
  for (size_t i = first; i < chunks_.size(); ++i) ids.push_back(i);
  return ids;
}

// Groups of up to kLanes consecutive chunks, spread over the threads.
template <class Entry>
template <class Body>
void Engine<Entry>::each_group(const std::vector<size_t>& ids, Body&& body,
                               const char* phase) {
  const long groups = long((ids.size() + kLanes - 1) / kLanes);
  std::vector<double> units(profile_ ? size_t(groups) : 0);
  const double began = omp_get_wtime();
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 1) if (groups > 1)
  for (long g = 0; g < groups; ++g) {
    const double unit_began = profile_ ? omp_get_wtime() : 0.0;
    const size_t first = size_t(g) * kLanes;
    body(ids.data() + first, int(std::min<size_t>(kLanes, ids.size() - first)));
    if (profile_) units[size_t(g)] = omp_get_wtime() - unit_began;
  }
  if (profile_) phases_.push_back(PhaseTiming{phase, true, omp_get_wtime() - began, units});
}

template <class Entry>
template <class Body>
void Engine<Entry>::sequential(const char* phase, Body&& body) {
  const double began = omp_get_wtime();
  body();
  if (profile_) phases_.push_back(PhaseTiming{phase, false, omp_get_wtime() - began, {}});
}

// Dense counters (walk.hpp) for tables of at most kDenseRows entries with at most
// kDenseReporting reporting states, so that flushing them stays cheap.
constexpr uint32_t kDenseRows = 1u << 15, kDenseReporting = 256;

template <class Entry>
Counters Engine<Entry>::counters() {
  const size_t rows = size_t(t_.states) << t_.shift;
  std::vector<uint32_t>& dense = dense_[slot()];
  const bool small = rows <= kDenseRows && t_.reporting_states() <= kDenseReporting;
  if (small && dense.empty()) dense.assign(rows, 0);
  Counters counting{totals(), small ? dense.data() : nullptr,
                    inc_.empty() ? nullptr : inc_.data(), t_.report_floor_offset(), t_.shift,
                    uint32_t(rows)};
  counting.modes = &modes_[slot()];
  counting.first = counting_from_;
  counting.settled = counting_settled_;
  return counting;
}

template <class Entry>
void Engine<Entry>::walk_group(const size_t* ids, int count, bool with_matches) {
  Lane lanes[kLanes];
  CountVisit counts[kLanes];
  MatchVisit matches[kLanes];
  for (int k = 0; k < count; ++k) {
    Chunk& chunk = chunks_[ids[k]];
    chunk.matches.clear();
    lanes[k] = Lane{data_ + chunk.begin, chunk.length(), chunk.begin, chunk.start};
    counts[k] = CountVisit{totals(), t_.report_floor_offset(), t_.shift};
    matches[k] = MatchVisit{counts[k], &t_, &chunk.matches};
  }
  if (with_matches) {
    walk_lane_group(m_, lanes, matches, count);
  } else {
    Counters counting = counters();
    count_lane_group(m_, lanes, counting, count);
  }
  for (int k = 0; k < count; ++k) chunks_[ids[k]].finish = lanes[k].state;
}

template <class Entry>
void Engine<Entry>::walk_known(const std::vector<size_t>& ids) {
  each_group(ids, [&](const size_t* group, int count) { walk_group(group, count, matches_); },
             matches_ ? "match pass" : "recount");
}

template <class Entry>
void Engine<Entry>::enumerate(Chunk& chunk, Enumerator& paths, const uint32_t* starts,
                              size_t skip) {
  chunk.map.resize(t_.states);
  paths.run(m_, t_.states, data_ + chunk.begin + skip, chunk.length() - skip, starts, t_.states,
            chunk.map.data());
}

template <class Entry>
uint32_t Engine<Entry>::compose_known_starts() {
  uint32_t state = chunks_[0].finish;
  for (size_t i = 1; i < chunks_.size(); ++i) {
    Chunk& chunk = chunks_[i];
    chunk.start = state;
    if (chunk.met_at != kNoMiss)
      state = chunk.finish;  // the same from every start
    else if (chunk.fused_walked && chunk.miss_at == kNoMiss)
      state = t_.fused_vectors[size_t(chunk.fused >> t_.fused_shift) * t_.states +
                               (state >> t_.shift)] << t_.shift;
    else
      state = chunk.map[state >> t_.shift];
  }
  return state;
}

template <class Entry>
void Engine<Entry>::finish(RunResult& result) const {
  // The threads' partial histograms, summed in parallel over states: each thread adds
  // its share of the states across every partial (as many adds as one partial holds).
  std::vector<uint64_t> hist(t_.reporting_states(), 0);
  const long states = long(hist.size());
#pragma omp parallel for num_threads(threads_) schedule(static) if (states * threads_ > (1 << 16))
  for (long r = 0; r < states; ++r)
    for (const auto& partial : totals_)
      if (!partial.empty()) hist[size_t(r)] += partial[size_t(r)];
  result.counts.assign(t_.tag_count, 0);
  for (uint32_t r = 0; r < hist.size(); ++r) {
    const uint32_t state = t_.report_floor + r;
    for (uint32_t i = t_.tag_begin[state]; i < t_.tag_begin[state + 1]; ++i)
      result.counts[t_.tag_list[i] & ~kDelayed] += hist[r];
  }
  const uint32_t final_internal = final_ >> t_.shift;
  result.final_state = t_.external[final_internal];
  for (uint32_t i = t_.end_begin[final_internal]; i < t_.end_begin[final_internal + 1]; ++i)
    ++result.counts[t_.end_list[i] & ~kDelayed];
  result.matches.clear();
  if (matches_) {
    size_t total = 0;
    for (const Chunk& chunk : chunks_) total += chunk.matches.size();
    result.matches.reserve(total);
    for (const Chunk& chunk : chunks_)
      result.matches.insert(result.matches.end(), chunk.matches.begin(), chunk.matches.end());
    for (uint32_t i = t_.end_begin[final_internal]; i < t_.end_begin[final_internal + 1]; ++i)
      result.matches.push_back(Match{n_ - (t_.end_list[i] >> 31), t_.end_list[i] & ~kDelayed});
    restore_match_order(result.matches);
  }
  result.chunks = chunks_.size();
  result.counting_modes = 0;
  for (uint32_t used : modes_) result.counting_modes |= used;
}

}  // namespace v1
}  // namespace parafuse::fsm
