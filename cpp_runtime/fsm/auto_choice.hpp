// parafuse boostfsm runtime: `auto` (compile-time analysis + a cheap look at the
// input), and run_machine, the entry point every generated library calls.
// The rules mirror fsm_compiler/scheme_choice.py, with lookback accuracy measured
// on this input (its first 64 KiB) instead of the training sample, and a partial
// fused DFA accepted when walks over samples of this input stay inside it.
// The first rule (fsm/auto_rates.hpp) times SIMD enumeration against table walks on
// small windows spread over the input where SIMD enumeration counts the run in one pass;
// where it is at least as fast per core it is the fastest scheme, and auto takes it without
// measuring anything else (no rules, no probes). Lookback right at 99% or more decides
// `spec` without probes for every machine (before: only where the kernels were timed).
// When profiled, each part of choosing is a phase of its own ("choose: rates", ...).
// Before the first rule, a machine of up to 16 states counting at most 4 groups took SIMD
// enumeration only after the lookback, convergence and fused rules (so `spec` or `hspec`
// on inputs where enumeration ran 2.5x faster), and larger machines never without probing.
#pragma once

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fsm/auto_probe.hpp"
#include "fsm/auto_rates.hpp"
#include "fsm/schemes.hpp"

namespace parafuse::fsm {
inline namespace v1 {

constexpr size_t kSmallInput = size_t(64) << 10;
constexpr size_t kAccuracyPrefix = size_t(64) << 10;  // walked sequentially: keep it short
constexpr size_t kAccuracyPositions = 64;  // fewer for big machines: see sampled_accuracy
constexpr size_t kAccuracyLookups = size_t(1) << 21;
constexpr size_t kFusedWindows = 16, kFusedWindowBytes = 4096;
constexpr size_t kMeetBytes = 1024;  // hspec: a wrong guess that meets the true path by then
constexpr size_t kEnumMeetBytes = size_t(16) << 10, kMeetPositions = 16;  // enum: all paths

// Lookback accuracy at evenly spaced positions of the input's prefix (truth: one
// sequential run over the prefix, advanced from position to position); negative when the
// prefix is too short. At a wrong prediction, also how far the two paths run before they
// meet: `slow_misses` counts those that did not meet within kMeetBytes. `sampled`: the
// positions measured. Where none of the first kHopelessAfter was right and none of those
// wrong guesses met the true path within kMeetBytes, sampling stops there: even at 50%
// accuracy (the threshold any rule asks for) that happens once in 65536, and the rules
// decide the same as on 0% of 64. (Before: every position, the whole 64 KiB prefix walked
// first: 0.25 ms on a 40-state permutation machine against runs of 5-10 ms.) On one
// thread: a parallel region costs a whole time slice (measured: 20 ms against runs of 5-10
// ms) where a core is busy elsewhere, and the predictions are bounded by kAccuracyLookups.
constexpr size_t kHopelessAfter = 16;

template <class Entry>
double Engine<Entry>::sampled_accuracy(size_t& slow_misses, size_t& sampled) {
  slow_misses = sampled = 0;
  const size_t prefix = std::min(n_, kAccuracyPrefix);
  if (prefix <= size_t(t_.lookback) + kAccuracyPositions) return -1.0;
  // Each prediction runs the lookback from every state: bound the total lookups.
  const size_t positions = std::clamp<size_t>(
      kAccuracyLookups / (size_t(t_.states) * t_.lookback), 8, kAccuracyPositions);
  size_t right = 0, slow = 0, done = 0;
  uint32_t real_state = t_.start << t_.shift;
  std::vector<double> units;
  Enumerator paths;
  const double began = omp_get_wtime();
  for (size_t i = 0; i < positions; ++i) {
    const double unit_began = omp_get_wtime();
    Chunk probe;
    probe.begin = t_.lookback + (prefix - t_.lookback) * (i + 1) / (positions + 1);
    real_state = walk_one(m_, data_ + done, probe.begin - done, 0, real_state, NoVisit{});
    done = probe.begin;
    uint32_t guess = predict(probe, paths), real = real_state;
    right += guess == real;
    const size_t horizon = std::min(kMeetBytes, n_ - probe.begin);
    for (size_t j = 0; j < horizon && guess != real; ++j)
      guess = m_.step(guess, data_[probe.begin + j]), real = m_.step(real, data_[probe.begin + j]);
    slow += guess != real;
    if (profile_) units.push_back(omp_get_wtime() - unit_began);
    if (++sampled == kHopelessAfter && right == 0 && slow == sampled) break;
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
  const SimdPlan simd = simd_plan();  // all states at once where it runs (fsm/simd_enum.hpp)
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
// first missing transition decides. (Before: each window walked to its end with a
// histogram of every reporting fused state, allocated per call: 0.27 ms, mostly page
// faults, on a 40-state permutation machine whose walks left the stored part at once.)
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

// body(), timed as a phase of choosing of its own where profiling (`name`: "choose: ...").
template <class Entry, class Body>
auto choice_phase(Engine<Entry>& engine, const char* name, Body&& body) {
  const double began = omp_get_wtime();
  auto result = body();
  if (engine.profile_) {
    const double seconds = omp_get_wtime() - began;
    engine.parallel_choose_seconds_ += seconds;  // not counted again in "choose"
    engine.phases().push_back(PhaseTiming{name, false, seconds, {}});
  }
  return result;
}

inline std::string percent(double fraction) {
  std::ostringstream text;
  text.setf(std::ios::fixed);
  text.precision(1);
  text << 100 * fraction << "%";
  return text.str();
}

template <class Entry>
std::string Engine<Entry>::choose(size_t chunks, std::string& reason) {
  std::ostringstream why;
  if (n_ < kSmallInput || chunks < 2) {
    why << (chunks < 2 ? "one chunk was requested" : "the input is under 64 KiB")
        << ", so splitting it cannot pay off";
    reason = why.str();
    return "seq";
  }
  {  // the first rule; where it measured but did not decide, its rates open the reason
    // (the plan is built once per process and machine: `enum` would build it too)
    const SimdPlan simd = choice_phase(*this, "choose: plan", [&] { return simd_plan(); });
    if (simd_counts_in_one_pass(simd, chunks)) {
      rates_ = choice_phase(*this, "choose: rates", [&] { return kernel_rates(simd); });
      const double simd_rate = rates_.simd, walk_rate = rates_.walks;
      std::ostringstream rates;
      rates.setf(std::ios::fixed);
      rates.precision(2);
      rates << "SIMD enumeration (" << simd_path_words(simd) << ", " << t_.states << " states, "
            << simd.groups << " counted groups) ran " << simd_rate / 1e9 << " GB/s per core and "
            << kLanes << " interleaved table walks " << walk_rate / 1e9
            << " GB/s over the same bytes of this input";
      if (simd_rate >= walk_rate) {
        why << rates.str() << ": every other scheme walks a table at least once per byte, and "
            << "enumeration's speed does not depend on the input, so it is the fastest at any "
            << "thread count (one pass counts each chunk from every start state)";
        reason = why.str();
        decided_by_rates_ = true;
        return "enum";
      }
      why << rates.str() << ", so not taken on that ground; ";
    }
  }
  size_t slow_misses = 0, sampled = 0;
  const double accuracy = sampled_accuracy(slow_misses, sampled);
  std::string measured = accuracy < 0 ? std::string("unmeasured") : percent(accuracy);
  if (accuracy >= 0) measured += " of " + std::to_string(sampled) + " sampled positions";
  if (accuracy == 0 && sampled == kHopelessAfter && slow_misses == sampled)
    measured += " (none right and no wrong guess met the true path within " +
                std::to_string(kMeetBytes) + " bytes, where sampling stops)";
  if (accuracy >= 0.99) {
    why << "speculation from " << t_.lookback << " bytes of lookback was right at " << measured
        << ", so chunks walk the small table and validation is nearly free";
    // spec then costs about kLanes interleaved walks per byte plus its predictions: where
    // SIMD enumeration was timed it ran slower than those walks (the first rule), and every
    // other scheme walks a table at least as wide at least once per byte (fused a wider
    // one, with its histogram; enum from every state until paths meet, then the walk;
    // hspec the same walks at one thread), so nothing is left to probe. Before, machines
    // past SIMD's lanes were probed here too (weblog, 342 states: 0.3 ms of probes whose
    // samples priced spec 6x too fast, against runs of 5-10 ms).
    decided_by_lookback_ = true;
    if (rates_.simd > 0) why << " (at about the timed walks' rate, above enumeration's)";
    reason = why.str();
    return "spec";
  }
  // Measured (bench/results/fsm.md): where paths meet within 16 KiB, enum enumerates a
  // chunk only that far and walks the rest once (kLanes chunks per thread); where wrong
  // guesses recover within 1 KiB, hspec re-runs little; both beat fused (wider table,
  // fused-state histograms).
  if (paths_meet_on_sample()) {
    why << "from every state, the paths met within " << kEnumMeetBytes << " bytes at all "
        << kMeetPositions << " sampled positions (speculation was right at " << measured
        << "), so each chunk is enumerated only until its paths meet, then walked once";
    reason = why.str();
    return "enum";
  }
  if (accuracy >= 0.5 && slow_misses == 0) {
    why << "speculation from " << t_.lookback << " bytes of lookback was right at " << measured
        << " and every wrong guess met the true path within " << kMeetBytes
        << " bytes, so misspeculated chunks are re-run briefly, in parallel rounds";
    reason = why.str();
    return "hspec";
  }
  if (t_.fused_complete) {
    why << "the fused DFA has " << t_.fused_count << " states (bound " << t_.fused_bound
        << "), so each chunk costs one table lookup per byte";
    reason = why.str();
    return "fused";
  }
  if (choice_phase(*this, "choose: fused", [&] { return fused_stays_on_sample(); })) {
    why << "the fused DFA exceeds its bound, but walks over " << kFusedWindows
        << " samples of this input stayed inside its " << t_.fused_count << " stored states";
    reason = why.str();
    return "fused";
  }
  if (t_.converge2_p90 <= 256) {
    why << "speculation was right at " << measured << ", but at 90% of "
        << "training positions at most 2 paths remain after " << t_.converge2_p90 << " bytes";
    reason = why.str();
    return "enum";
  }
  if (accuracy >= 0.5) {
    why << "speculation was right at " << measured << ", so misspeculated"
        << " chunks are re-validated in parallel rounds";
    reason = why.str();
    return "hspec";
  }
  if (t_.converge4_median != kUnknown) {
    why << "speculation was right at " << measured << ", and half the "
        << "training positions keep at most 4 paths after " << t_.converge4_median << " bytes";
    reason = why.str();
    return "enum";
  }
  why << "the fused DFA exceeds its bound, paths do not converge and speculation was right at "
      << "only " << measured;
  if (rates_.simd > 0)  // fsm/auto_rates.hpp
    rates_.single = choice_phase(*this, "choose: rates", [&] { return single_walk_rate(); });
  if (rates_.simd > 0 && rates_.simd * threads_ >= rates_.single) {
    std::ostringstream rates;
    rates.setf(std::ios::fixed);
    rates.precision(2);
    rates << ", so only seq and SIMD enumeration are left: enumeration on " << threads_
          << " thread(s) at " << rates_.simd / 1e9 << " GB/s per core beats one walk at "
          << rates_.single / 1e9 << " GB/s";
    reason = why.str() + rates.str();
    decided_by_rates_ = true;
    return "enum";
  }
  reason = why.str();
  return "seq";
}

template <class Entry>
RunResult run_typed(const Tables& t, const uint8_t* data, size_t n, const RunOptions& options,
                    int threads, size_t chunks) {
  Engine<Entry> engine(t, data, n, threads);
  engine.profile_ = options.profile;
  engine.simd_ = options.simd;
  engine.wants_matches_ = options.matches;
  RunResult result;
  result.threads = threads;
  result.entry_bytes = int(sizeof(Entry));
  std::string scheme = options.scheme, choice;
  const double began = omp_get_wtime();
  // The rules explain, probes decide (fsm/auto_probe.hpp); a choice measured earlier in
  // this process over the same sample skips both.
  const ProbeRun probing{threads, chunks, options.simd, options.matches};
  const bool remembered = scheme == "auto" && choice_phase(engine, "choose: remembered", [&] {
    return remembered_choice(t, data, n, probing, scheme, choice);
  });
  if (scheme == "auto" && !remembered) {
    scheme = engine.choose(chunks, choice);
    if (engine.decided_by_rates_ || engine.decided_by_lookback_) {  // decisive without probes
      choice = (engine.decided_by_rates_ ? "measured rates: " : "by the lookback rule: ") + choice;
      remember_choice(t, data, n, probing, scheme, choice);
    } else {
      scheme = choice_phase(engine, "choose: probes", [&] {
        return measured_choice<Entry>(t, data, n, probing, scheme, engine.speculation_hopeless_,
                                      engine.rates_.simd, choice);
      });
    }
  }
  if (options.profile && options.scheme == "auto")  // the predictions are a phase of their own
    engine.phases().push_back(
        PhaseTiming{"choose", false, omp_get_wtime() - began - engine.parallel_choose_seconds_, {}});
  const std::string done = engine.run_scheme(scheme, chunks, options.matches);
  result.scheme = scheme;
  result.reason = choice.empty() ? done : choice + "; " + done;
  const double reducing = omp_get_wtime();
  engine.finish(result);  // sums the partial histograms in parallel over states
  if (options.profile)
    engine.phases().push_back(PhaseTiming{"reduce", false, omp_get_wtime() - reducing, {}});
  result.phases = std::move(engine.phases());
  return result;
}

// The run's threads and chunks from `options`; throws std::invalid_argument for an
// unknown scheme or a bad thread or chunk count.
inline void checked_run_shape(const RunOptions& options, int& threads, size_t& chunks) {
  if (!is_scheme(options.scheme))
    throw std::invalid_argument("unknown scheme '" + options.scheme +
                                "' (schemes are auto, seq, enum, fused, spec, hspec)");
  if (options.threads < 0) throw std::invalid_argument("threads must be 0 or more");
  threads = options.threads > 0 ? options.threads : omp_get_max_threads();
  chunks = options.chunks ? options.chunks : size_t(threads) * kLanes;
  if (chunks > kMaxChunks)
    throw std::invalid_argument("at most " + std::to_string(kMaxChunks) + " chunks");
}

// run_machine for tables of `Entry` entries only: a machine's library, whose blob fixes
// the width, instantiates the schemes once instead of for all three widths.
template <class Entry>
RunResult run_machine_with(const Tables& t, const uint8_t* data, size_t n,
                           const RunOptions& options) {
  int threads = 1;
  size_t chunks = 1;
  checked_run_shape(options, threads, chunks);
  if (t.entry_bytes != sizeof(Entry))
    throw std::logic_error("tables of " + std::to_string(t.entry_bytes) +
                           "-byte entries run by a library built for " +
                           std::to_string(sizeof(Entry)) + "-byte entries");
  return run_typed<Entry>(t, data, n, options, threads, chunks);
}

// Run the machine of `t` over data[0, n) as `options` ask (checked_run_shape's errors).
inline RunResult run_machine(const Tables& t, const uint8_t* data, size_t n,
                             const RunOptions& options) {
  int threads = 1;
  size_t chunks = 1;
  checked_run_shape(options, threads, chunks);
  switch (t.entry_bytes) {
    case 1: return run_typed<uint8_t>(t, data, n, options, threads, chunks);
    case 2: return run_typed<uint16_t>(t, data, n, options, threads, chunks);
    default: return run_typed<uint32_t>(t, data, n, options, threads, chunks);
  }
}

}  // namespace v1
}  // namespace parafuse::fsm
