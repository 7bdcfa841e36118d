// parafuse boostfsm runtime: fused, spec, hspec, auto, and the entry point.
// Included by schemes.hpp (the Engine declaration and seq/enum live there).
#pragma once

#include "schemes.hpp"

namespace parafuse::fsm {
inline namespace v1 {

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

template <class Entry>
void Engine<Entry>::predict_and_walk(const std::vector<size_t>& ids) {
  each_group(ids, [&](const size_t* group, int count) {
    Enumerator paths;
    for (int k = 0; k < count; ++k)
      if (group[k] != 0) chunks_[group[k]].start = predict(chunks_[group[k]], paths);
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

template <class Entry>
std::string Engine<Entry>::run_speculative(bool higher_order) {
  predict_and_walk(all_from(0));
  uint64_t rerun_bytes = 0;
  size_t misspeculated = 0, rounds = 0;
  for (size_t i = 1; i < chunks_.size(); ++i)
    misspeculated += chunks_[i].start != chunks_[i - 1].finish;
  if (!higher_order) {
    sequential("validate", [&] {
      for (size_t i = 1; i < chunks_.size(); ++i)
        if (chunks_[i].start != chunks_[i - 1].finish)
          rerun_bytes += fix(chunks_[i], chunks_[i - 1].finish);
    });
  } else {
    size_t confirmed = 1;  // chunks [0, confirmed) ran from their true start states
    std::vector<uint32_t> wanted(chunks_.size());
    for (;;) {
      while (confirmed < chunks_.size() &&
             chunks_[confirmed].start == chunks_[confirmed - 1].finish)
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
      ++rounds;
    }
  }
  final_ = chunks_.back().finish;
  if (matches_) {  // the counts come again with the matches
    for (auto& partial : totals_) std::fill(partial.begin(), partial.end(), 0);
    walk_known(all_from(0));
  }
  std::ostringstream reason;
  reason << "speculated " << chunks_.size() - 1 << " chunk starts from " << t_.lookback
         << " bytes of lookback; " << misspeculated << " misspeculated";
  if (higher_order) reason << "; " << rounds << " parallel re-validation rounds";
  reason << " re-ran " << rerun_bytes << " bytes until the paths converged";
  if (matches_) reason << "; matches from a second pass from the chunks' start states";
  return reason.str();
}

template <class Entry>
std::string Engine<Entry>::run_scheme(const std::string& scheme, size_t chunks, bool matches) {
  matches_ = matches;
  if (scheme == "seq") return run_seq();
  split(chunks);
  if (scheme == "enum") return run_enum();
  if (scheme == "fused") return run_fused();
  if (scheme == "spec") return run_speculative(false);
  if (scheme == "hspec") return run_speculative(true);
  throw std::invalid_argument("unknown scheme '" + scheme +
                              "' (schemes are auto, seq, enum, fused, spec, hspec)");
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
      result.counts[t_.tag_list[i]] += hist[r];
  }
  result.final_state = t_.external[final_ >> t_.shift];
  result.matches.clear();
  if (matches_) {
    size_t total = 0;
    for (const Chunk& chunk : chunks_) total += chunk.matches.size();
    result.matches.reserve(total);
    for (const Chunk& chunk : chunks_)
      result.matches.insert(result.matches.end(), chunk.matches.begin(), chunk.matches.end());
  }
  result.chunks = chunks_.size();
}

}  // namespace v1
}  // namespace parafuse::fsm

#include "auto_choice.hpp"
