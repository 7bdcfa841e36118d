// parafuse boostfsm runtime: the execution schemes (docs/fsm-language.md section 6), all exact.
//
//   seq    one pass, interleaving nothing: the baseline
//   enum   chunks run from every state (merging paths) -> compose -> recount from true starts
//   fused  chunks walk the fused DFA (one lookup per byte) with a fused-state histogram;
//          a chunk that leaves a partial fused DFA continues as enum
//   spec   chunks run from a state predicted by lookback; a sequential walk re-runs
//          misspeculated chunks from the true state until the paths converge
//   hspec  like spec, but misspeculated chunks are re-run in parallel rounds against
//          their predecessor's latest result, until every chunk is confirmed
//
// Matches come from a second parallel pass from the known chunk start states.
// The engine they share is fsm/core/engine.hpp; `auto` and the entry point, run_machine,
// are fsm/auto/choice.hpp (engine -> schemes -> auto_choice).
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fsm/core/engine.hpp"
#include "fsm/simd/enum.hpp"

namespace parafuse::fsm {
inline namespace v1 {

template <class Entry>
std::string Engine<Entry>::run_seq() {
  split(1);
  const size_t only = 0;
  sequential("walk", [&] { walk_group(&only, 1, matches_); });
  final_ = chunks_[0].finish;
  return "one sequential pass";
}

// enum: each chunk after the first runs from every state until its paths meet (or to
// its end); from there on the chunk's walk is the same from any start, so it is walked
// once, interleaved with other chunks, and counted. Once the starts are composed, only
// the prefixes before the meeting points (whole chunks whose paths never met) are
// walked again from the true starts.
template <class Entry>
std::string Engine<Entry>::run_enum() {
  const SimdPlan simd = simd_plan();
  if (simd.path != SimdPath::none) return run_simd_enum(simd);
  uint64_t steps = 0, enumerated = 0;
  const long count = long(chunks_.size());
  std::vector<double> units(profile_ ? chunks_.size() : 0);
  const double began = omp_get_wtime();
#pragma omp parallel num_threads(threads_) reduction(+ : steps, enumerated)
  {
    Enumerator paths;
#pragma omp for schedule(dynamic, 1)
    for (long i = 1; i < count; ++i) {
      const double unit_began = omp_get_wtime();
      Chunk& chunk = chunks_[size_t(i)];
      chunk.map.resize(t_.states);
      paths.run(m_, t_.states, data_ + chunk.begin, chunk.length(), all_states_.data(),
                t_.states, chunk.map.data(), true);
      chunk.met_at = paths.met;
      if (paths.met != kNoMiss) chunk.met_state = paths.live[0];
      enumerated += paths.met != kNoMiss ? paths.met : chunk.length();
      if (profile_) units[size_t(i)] = omp_get_wtime() - unit_began;
    }
    steps += paths.steps;
  }
  if (profile_) phases_.push_back(PhaseTiming{"enumerate", true, omp_get_wtime() - began, units});
  // From the meeting points (chunk 0: from its start) to the chunks' ends.
  each_group(all_from(0), [&](const size_t* group, int count) {
    Lane lanes[kLanes] = {};
    size_t ids[kLanes] = {};
    int used = 0;
    for (int k = 0; k < count; ++k) {
      Chunk& chunk = chunks_[group[k]];
      if (group[k] == 0 && matches_) walk_group(group + k, 1, true);
      else if (group[k] == 0) lanes[used] = Lane{data_, chunk.length(), 0, chunk.start}, ids[used++] = 0;
      else if (chunk.met_at != kNoMiss)
        lanes[used] = Lane{data_ + chunk.begin + chunk.met_at, chunk.length() - chunk.met_at,
                           chunk.begin + chunk.met_at, chunk.met_state}, ids[used++] = group[k];
    }
    if (used == 0) return;
    if (matches_) {  // counted by the match pass, from the true starts
      const NoVisit none[kLanes] = {};
      walk_lane_group(m_, lanes, none, used);
    } else {
      Counters counting = counters();
      count_lane_group(m_, lanes, counting, used);
    }
    for (int k = 0; k < used; ++k) chunks_[ids[k]].finish = lanes[k].state;
  }, "walk");
  sequential("compose", [&] { final_ = compose_known_starts(); });
  if (matches_) {
    walk_known(all_from(1));
  } else {
    each_group(all_from(1), [&](const size_t* group, int count) {
      Lane lanes[kLanes];
      for (int k = 0; k < count; ++k) {
        const Chunk& chunk = chunks_[group[k]];
        lanes[k] = Lane{data_ + chunk.begin, std::min(chunk.met_at, chunk.length()),
                        chunk.begin, chunk.start};
      }
      Counters counting = counters();
      count_lane_group(m_, lanes, counting, count);
    }, "recount prefixes");
  }
  size_t met = 0;
  for (const Chunk& chunk : chunks_) met += chunk.met_at != kNoMiss;
  std::ostringstream reason;
  reason << "enumerated " << chunks_.size() - 1 << " chunks from all " << t_.states
         << " states (" << (enumerated ? double(steps) / double(enumerated) : 0.0)
         << " lookups per byte as paths merged); in " << met << " the paths met (after "
         << enumerated << " bytes in all) and the rest was walked once; then recounted the "
         << "parts before from their true start states ("
         << (merging_enum_ ? "auto runs the merging scalar enumeration here" : simd.why_not) << ")";
  return reason.str();
}

template <class Entry>
void Engine<Entry>::recount_fused(Chunk& chunk) {
  uint64_t* hist = totals();
  const uint32_t start = chunk.start >> t_.shift;
  for (uint32_t f = 0; f < t_.reporting_fused(); ++f) {
    if (!chunk.fused_hist[f]) continue;
    const uint32_t state = t_.fused_vectors[size_t(t_.fused_floor + f) * t_.states + start];
    if (state >= t_.report_floor) hist[state - t_.report_floor] += chunk.fused_hist[f];
  }
}

template <class Entry>
std::string Engine<Entry>::run_fused() {
  const std::vector<size_t> ids = all_from(1);
  each_group(all_from(0), [&](const size_t* group, int count) {
    if (group[0] == 0) walk_group(group, 1, matches_), ++group, --count;  // chunk 0: its start is known
    if (count == 0) return;
    FusedLane lanes[kLanes];
    thread_local std::vector<uint32_t> ignored;  // the histogram of chunks too short for one
    ignored.resize(std::max<uint32_t>(1, t_.reporting_fused()));
    for (int k = 0; k < count; ++k) {
      Chunk& chunk = chunks_[group[k]];
      chunk.fused_walked = true;
      if (chunk.length() * 16 >= t_.reporting_fused())
        chunk.fused_hist.assign(std::max<uint32_t>(1, t_.reporting_fused()), 0);
      lanes[k] = FusedLane{data_ + chunk.begin, chunk.length(), t_.fused_start << t_.fused_shift,
                           chunk.fused_hist.empty() ? ignored.data() : chunk.fused_hist.data(),
                           kNoMiss, 0};
    }
    if (t_.fused_complete) walk_fused_group<false>(t_, lanes, count);
    else walk_fused_group<true>(t_, lanes, count);
    Enumerator paths;
    std::vector<uint32_t> starts(t_.states);
    for (int k = 0; k < count; ++k) {
      Chunk& chunk = chunks_[group[k]];
      chunk.fused = lanes[k].fused;
      chunk.miss_at = lanes[k].miss_at;
      if (chunk.miss_at == kNoMiss) continue;
      // Continue as enum from the vector just before the missing transition.
      const uint32_t* before =
          t_.fused_vectors + size_t(lanes[k].miss_from >> t_.fused_shift) * t_.states;
      for (uint32_t s = 0; s < t_.states; ++s) starts[s] = before[s] << t_.shift;
      enumerate(chunk, paths, starts.data(), chunk.miss_at);
    }
  }, "fused walk");
  sequential("compose", [&] { final_ = compose_known_starts(); });
  std::vector<size_t> recount;
  size_t missed = 0, fused_bytes = 0;
  for (size_t id : ids) {
    if (chunks_[id].miss_at != kNoMiss) ++missed, fused_bytes += chunks_[id].miss_at;
    else fused_bytes += chunks_[id].length();
    if (matches_ || chunks_[id].miss_at != kNoMiss || chunks_[id].fused_hist.empty())
      recount.push_back(id);
  }
  if (!matches_) {
    each_group(ids, [&](const size_t* group, int count) {
      for (int k = 0; k < count; ++k)
        if (chunks_[group[k]].miss_at == kNoMiss && !chunks_[group[k]].fused_hist.empty())
          recount_fused(chunks_[group[k]]);
    }, "fused counts");
  }
  walk_known(recount);
  std::ostringstream reason;
  if (t_.fused_complete) {
    reason << "walked the fused DFA (" << t_.fused_count << " fused states) over "
           << ids.size() << " chunks, one lookup per byte";
  } else {
    reason << "the fused DFA exceeds its bound, so the compiler stored its first "
           << t_.fused_count << " fused states; " << ids.size() - missed << " of " << ids.size()
           << " chunks stayed inside them and " << missed
           << " left them and continued as enum (" << fused_bytes << " of "
           << n_ - chunks_[0].length() << " bytes walked fused)";
  }
  if (matches_) reason << "; matches from a second pass from the chunks' start states";
  return reason.str();
}

// The start state predicted by running the `lookback` bytes before the chunk from
// every state: the most frequent end state (exact when the window reaches offset 0).
// Where that would cost over kPredictLookups (big machines, e.g. pattern sets of
// thousands of states: more than walking the chunk itself), from the start state only.
constexpr size_t kPredictLookups = size_t(1) << 16;

template <class Entry>
uint32_t Engine<Entry>::predict(const Chunk& chunk, Enumerator& paths) {
  const size_t window = std::min<size_t>(t_.lookback, chunk.begin);
  const uint8_t* from = data_ + chunk.begin - window;
  if (window == chunk.begin || size_t(t_.states) * window > kPredictLookups)
    return walk_one(m_, from, window, 0, t_.start << t_.shift, NoVisit{});
  paths.run(m_, t_.states, from, window, all_states_.data(), t_.states, nullptr);
  return paths.most_frequent();
}

// Predictions first, a phase of their own ("predict": per chunk, whatever its length, so
// auto's probes over a short sample measure it rather than scale it to the input), then
// every chunk walked from its prediction ("speculate").
template <class Entry>
void Engine<Entry>::predict_and_walk(const std::vector<size_t>& ids) {
  each_group(ids, [&](const size_t* group, int count) {
    Enumerator paths;
    uint64_t lookups = 0;  // as sampled_accuracy counts them (fsm/auto/choice.hpp)
    for (int k = 0; k < count; ++k) {
      if (group[k] == 0) continue;
      const uint64_t before = paths.steps;
      chunks_[group[k]].start = predict(chunks_[group[k]], paths);
      lookups += paths.steps != before ? paths.steps - before
                                       : std::min<size_t>(t_.lookback, chunks_[group[k]].begin);
    }
#pragma omp atomic
    prediction_lookups_done_ += lookups;
  }, "predict");
  each_group(ids, [&](const size_t* group, int count) {
    walk_group(group, count, false);  // matches come once the starts are known
  }, "speculate");
}

// Re-run `chunk` from `true_start` beside its run from its current start until the two
// paths meet; the histogram is corrected by the difference over that prefix.
template <class Entry>
uint64_t Engine<Entry>::fix(Chunk& chunk, uint32_t true_start) {
  uint32_t old_path = chunk.start, new_path = true_start;
  const uint8_t* bytes = data_ + chunk.begin;
  const uint32_t floor_offset = t_.report_floor_offset(), shift = t_.shift;
  uint64_t* hist = totals();
  size_t i = 0;
  for (; i < chunk.length() && old_path != new_path; ++i) {
    old_path = m_.step(old_path, bytes[i]);
    new_path = m_.step(new_path, bytes[i]);
    if (old_path >= floor_offset) --hist[(old_path - floor_offset) >> shift];
    if (new_path >= floor_offset) ++hist[(new_path - floor_offset) >> shift];
  }
  if (old_path != new_path) chunk.finish = new_path;
  chunk.start = true_start;
  return i;
}

// spec's validation: each chunk whose start differs from its predecessor's end is re-run
// from that end, one after another, until the paths meet; returns the bytes re-run.
template <class Entry>
uint64_t Engine<Entry>::validate_in_order() {
  uint64_t rerun_bytes = 0;
  sequential("validate", [&] {
    for (size_t i = 1; i < chunks_.size(); ++i)
      if (chunks_[i].start != chunks_[i - 1].finish)
        rerun_bytes += fix(chunks_[i], chunks_[i - 1].finish);
  });
  return rerun_bytes;
}

// hspec's validation: rounds in which every chunk past the confirmed prefix whose start
// differs from its predecessor's current end is re-run in parallel; returns the bytes
// re-run, and the rounds in `rounds`.
template <class Entry>
uint64_t Engine<Entry>::validate_in_rounds(size_t& rounds) {
  uint64_t rerun_bytes = 0;
  size_t confirmed = 1;  // chunks [0, confirmed) ran from their true start states
  std::vector<uint32_t> wanted(chunks_.size());
  for (rounds = 0;; ++rounds) {
    while (confirmed < chunks_.size() && chunks_[confirmed].start == chunks_[confirmed - 1].finish)
      ++confirmed;
    if (confirmed == chunks_.size()) break;
    std::vector<size_t> stale;
    for (size_t i = confirmed; i < chunks_.size(); ++i) {
      wanted[i] = chunks_[i - 1].finish;
      if (chunks_[i].start != wanted[i]) stale.push_back(i);
    }
    const long count = long(stale.size());
    uint64_t bytes = 0;
    std::vector<double> units(profile_ ? stale.size() : 0);
    const double began = omp_get_wtime();
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 1) reduction(+ : bytes) if (count > 1)
    for (long j = 0; j < count; ++j) {
      const double unit_began = omp_get_wtime();
      bytes += fix(chunks_[stale[j]], wanted[stale[j]]);
      if (profile_) units[size_t(j)] = omp_get_wtime() - unit_began;
    }
    if (profile_)
      phases_.push_back(PhaseTiming{"re-validate", true, omp_get_wtime() - began, units});
    rerun_bytes += bytes;
  }
  return rerun_bytes;
}

template <class Entry>
std::string Engine<Entry>::run_speculative(bool higher_order) {
  predict_and_walk(all_from(0));
  size_t misspeculated = 0, rounds = 0;
  for (size_t i = 1; i < chunks_.size(); ++i)
    misspeculated += chunks_[i].start != chunks_[i - 1].finish;
  const uint64_t rerun_bytes = higher_order ? validate_in_rounds(rounds) : validate_in_order();
  final_ = chunks_.back().finish;
  if (matches_) {  // the counts come again with the matches
    for (auto& partial : totals_) std::fill(partial.begin(), partial.end(), 0);
    walk_known(all_from(0));
  }
  std::ostringstream reason;
  reason << "speculated " << chunks_.size() - 1 << " chunk starts from " << t_.lookback
         << " bytes of lookback (" << prediction_lookups_done_ << " lookups); " << misspeculated
         << " misspeculated";
  if (higher_order) reason << "; " << rounds << " parallel re-validation rounds";
  reason << " re-ran " << rerun_bytes << " bytes until the paths converged";
  if (matches_) reason << "; matches from a second pass from the chunks' start states";
  return reason.str();
}

// For auto's probes (fsm/auto/probe.hpp): spec's and hspec's phases from one run, since the
// two predict and walk alike and differ only in how they validate. After the walks, the
// chunks are validated in order (spec's phases), then put back and validated in rounds
// (hspec's); with matches, the second pass runs once and counts for both. The counts
// are left wrong (corrected twice): a probe's are not read.
template <class Entry>
void Engine<Entry>::probe_speculation(size_t chunks, bool matches, std::vector<PhaseTiming>& spec,
                                      std::vector<PhaseTiming>& hspec) {
  matches_ = matches;
  split(chunks);
  predict_and_walk(all_from(0));
  const std::vector<Chunk> walked = chunks_;
  const size_t common = phases_.size();
  validate_in_order();
  const size_t validated = phases_.size();
  if (matches_) walk_known(all_from(0));
  spec = phases_;
  phases_.resize(common);
  chunks_ = walked;
  size_t rounds = 0;
  validate_in_rounds(rounds);
  phases_.insert(phases_.end(), spec.begin() + long(validated), spec.end());
  hspec = std::move(phases_);
  phases_.clear();
}

template <class Entry>
std::string Engine<Entry>::run_scheme(Scheme scheme, size_t chunks, bool matches) {
  matches_ = matches;
  if (scheme == Scheme::seq) return run_seq();
  split(chunks);
  switch (scheme) {
    case Scheme::enumeration: return run_enum();
    case Scheme::fused: return run_fused();
    case Scheme::spec: return run_speculative(false);
    case Scheme::hspec: return run_speculative(true);
    default: throw std::logic_error("run_scheme runs a chosen scheme, not auto");
  }
}

}  // namespace v1
}  // namespace parafuse::fsm
