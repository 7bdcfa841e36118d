// parafuse boostfsm runtime: what `auto` measures on samples of the input before its rules
// decide (fsm/auto/choice.hpp): lookback accuracy (and what a prediction costs), whether
// the paths from every state meet, whether walks stay inside a partial fused DFA. Each is
// a phase of choosing of its own when profiled ("choose: predict", "choose: meet").
#pragma once

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "fsm/core/schemes.hpp"

namespace parafuse::fsm {
inline namespace v1 {

constexpr size_t kAccuracySpacing = 256;   // bytes between sampled positions (walked)
constexpr size_t kAccuracyPositions = 64, kAccuracyMinPositions = 16;  // see sampled_accuracy
constexpr size_t kAccuracyLookups = size_t(1) << 21;  // the budget's cap
constexpr size_t kAccuracyMinLookups = size_t(1) << 15, kAccuracyShare = 256;
constexpr size_t kFusedWindows = 16, kFusedWindowBytes = 4096;
constexpr size_t kMeetBytes = 1024;  // hspec: a wrong guess that meets the true path by then
constexpr size_t kEnumMeetBytes = size_t(16) << 10, kMeetPositions = 16;  // enum: all paths

// Lookback accuracy at positions kAccuracySpacing bytes apart at the input's start (truth:
// one sequential run, advanced from position to position); negative when the input is too
// short. The positions' lookups (the walk between them, each prediction from every state,
// the walks of a wrong guess beside the truth) are budgeted at 1/kAccuracyShare of the
// input's bytes per thread (a lookup costs 1-3 ns, the run about 0.3-1 ns a byte a thread:
// 0.3-1.5% of the run), within [kAccuracyMinLookups, kAccuracyLookups], a prediction
// counted with twice the states for merging its paths: sampling stops once they are spent,
// after kAccuracyMinPositions (kHopelessAfter) at least and kAccuracyPositions at most
// (16 MiB: a 342-state
// pattern set 43 positions at one thread, 21 at two; a 14-state machine 64).
// Also measured: the lookups each prediction took (paths merge as they run, and past
// kPredictLookups a prediction walks from the start state alone), which price
// speculation's predictions for the probes (fsm/auto/probe.hpp).
// At a wrong prediction, also how far the two paths run before they meet: `slow_misses`
// counts those that did not meet within kMeetBytes. `sampled`: the positions measured.
// Where none of the first kHopelessAfter was right and none of those wrong guesses met the
// true path within kMeetBytes, sampling stops there: even at 50% accuracy (the threshold
// any rule asks for) that happens once in 65536, and the rules decide the same as on 0%
// of 64. On one thread: a parallel region costs a whole time slice (measured: 20 ms
// against runs of 5-10 ms) where a core is busy elsewhere.
constexpr size_t kHopelessAfter = 16;

template <class Entry>
double Engine<Entry>::sampled_accuracy(size_t& slow_misses, size_t& sampled) {
  slow_misses = sampled = 0;
  const uint64_t budget = std::clamp(n_ / size_t(std::max(1, threads_)) / kAccuracyShare,
                                     kAccuracyMinLookups, kAccuracyLookups);
  const size_t positions = kAccuracyPositions;
  const size_t prefix = std::min(n_, t_.lookback + (positions + 1) * kAccuracySpacing);
  if (prefix <= size_t(t_.lookback) + kAccuracyPositions) return -1.0;
  size_t right = 0, slow = 0, done = 0;
  uint64_t spent = 0;  // lookups: predictions, walks, meetings
  uint32_t real_state = t_.start << t_.shift;
  std::vector<double> units;
  Enumerator paths;
  const double began = omp_get_wtime();
  for (size_t i = 0; i < positions; ++i) {
    const double unit_began = omp_get_wtime();
    Chunk probe;
    probe.begin = t_.lookback + (prefix - t_.lookback) * (i + 1) / (positions + 1);
    real_state = walk_one(m_, data_ + done, probe.begin - done, 0, real_state, NoVisit{});
    spent += probe.begin - done;
    done = probe.begin;
    const uint64_t steps_before = paths.steps;
    uint32_t guess = predict(probe, paths), real = real_state;
    // Enumerated predictions count their lookups; one from the start state walks the window.
    const uint64_t lookups = paths.steps != steps_before
                                 ? paths.steps - steps_before
                                 : uint64_t(std::min<size_t>(t_.lookback, probe.begin));
    right += guess == real;
    const size_t horizon = std::min(kMeetBytes, n_ - probe.begin);
    size_t j = 0;
    for (; j < horizon && guess != real; ++j)
      guess = m_.step(guess, data_[probe.begin + j]), real = m_.step(real, data_[probe.begin + j]);
    slow += guess != real;
    spent += lookups + 2 * uint64_t(t_.states) + 2 * j;  // + the merges of the starts' paths
    if (profile_) units.push_back(omp_get_wtime() - unit_began);
    if (++sampled == kHopelessAfter && right == 0 && slow == sampled) break;
    if (sampled >= kAccuracyMinPositions && spent >= budget) break;  // the budget is spent
  }
  const double seconds = omp_get_wtime() - began;
  parallel_choose_seconds_ += seconds;
  if (profile_) phases_.push_back(PhaseTiming{"choose: predict", true, seconds, units});
  slow_misses = slow;
  speculation_hopeless_ = 2 * right < sampled && slow == sampled - right;
  return double(right) / double(sampled);
}

// Whether the paths from every state meet within kEnumMeetBytes (fewer for big machines:
// a budget of lookups) at evenly spaced positions of the input; the runs are parallel.
template <class Entry>
bool Engine<Entry>::paths_meet_on_sample() {
  const size_t horizon =
      std::min(kEnumMeetBytes, kAccuracyLookups / kMeetPositions / size_t(t_.states));
  size_t missed = 0;
  std::vector<double> units(profile_ ? kMeetPositions : 0);
  const SimdPlan simd = simd_plan();  // all states at once where it runs (fsm/simd/enum.hpp)
  const double began = omp_get_wtime();
  std::atomic<bool> any_missed{false};
  const int team = 1;  // as in sampled_accuracy: no parallel region while choosing
#pragma omp parallel num_threads(team) reduction(+ : missed)
  {
    Enumerator paths;
#pragma omp for schedule(dynamic, 1)
    for (long i = 0; i < long(kMeetPositions); ++i) {
      const double unit_began = omp_get_wtime();
      const size_t begin = (n_ - std::min(n_, horizon)) * size_t(i) / (kMeetPositions - 1);
      if (any_missed) continue;  // one position where paths do not meet decides
      if (simd.path != SimdPath::none) {
        missed += !simd_paths_meet(simd, data_ + begin, std::min(horizon, n_ - begin));
      } else {
        paths.run(m_, t_.states, data_ + begin, std::min(horizon, n_ - begin),
                  all_states_.data(), t_.states, nullptr, true);
        missed += paths.met == kNoMiss;
      }
      if (missed) any_missed = true;
      if (profile_) units[size_t(i)] = omp_get_wtime() - unit_began;
    }
  }
  const double seconds = omp_get_wtime() - began;
  parallel_choose_seconds_ += seconds;
  if (profile_) phases_.push_back(PhaseTiming{"choose: meet", true, seconds, units});
  return missed == 0;
}

// Whether walks of the partial fused DFA from its start stay inside the stored part: the
// first missing transition decides. (Walking each window to its end with a histogram of
// every reporting fused state, allocated per call, costs 0.27 ms, mostly page faults, on
// a 40-state permutation machine whose walks leave the stored part at once.)
template <class Entry>
bool Engine<Entry>::fused_stays_on_sample() {
  for (size_t w = 0; w < kFusedWindows; ++w) {
    const size_t begin = (n_ - std::min(n_, kFusedWindowBytes)) * w / kFusedWindows;
    const size_t end = begin + std::min(n_ - begin, kFusedWindowBytes);
    uint32_t fused = t_.fused_start << t_.fused_shift;
    for (size_t i = begin; i < end; ++i) {
      fused = step_column(t_.fused_next, t_.byte_class, fused, data_[i]);
      if (fused == kFusedMissing) return false;
    }
  }
  return true;
}

}  // namespace v1
}  // namespace parafuse::fsm
