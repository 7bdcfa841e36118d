// parafuse boostfsm runtime: `auto` (compile-time analysis + a cheap look at the
// input), and run_machine, the entry point every generated library calls.
// The rules mirror fsm_compiler/analysis/scheme_choice.py, with lookback accuracy measured
// on this input (at its start: fsm/auto/samples.hpp) instead of the training sample, and a
// partial fused DFA accepted when walks over samples of this input stay inside it.
// The first rule (fsm/auto/rates.hpp) times SIMD enumeration against table walks on
// small windows spread over the input where SIMD enumeration counts the run in one pass;
// where it is at least as fast per core it is the fastest scheme, and auto takes it without
// measuring anything else (no rules, no probes). Lookback right at 99% or more decides
// `spec` without probes for every machine.
// When profiled, each part of choosing is a phase of its own ("choose: rates", ...).
// The first rule comes before the lookback, convergence and fused rules, for every
// machine whose run SIMD enumeration counts in one pass: those rules pick `spec` or
// `hspec` on inputs where enumeration runs 2.5x faster.
#pragma once

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fsm/auto/probe.hpp"
#include "fsm/auto/rates.hpp"
#include "fsm/auto/samples.hpp"
#include "fsm/core/schemes.hpp"

namespace parafuse::fsm {
inline namespace v1 {

constexpr size_t kSmallInput = size_t(64) << 10;

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

inline std::string fixed2(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

inline std::string percent(double fraction) {
  std::ostringstream text;
  text.setf(std::ios::fixed);
  text.precision(1);
  text << 100 * fraction << "%";
  return text.str();
}

template <class Entry>
Scheme Engine<Entry>::choose(size_t chunks, std::string& reason) {
  if (n_ < kSmallInput || chunks < 2) {
    reason = std::string(chunks < 2 ? "one chunk was requested" : "the input is under 64 KiB") +
             ", so splitting it cannot pay off";
    return Scheme::seq;
  }
  std::string opening;  // the rates, where they did not decide
  {  // the first rule; where it measured but did not decide, its rates open the reason
    // (the plan is built once per process and machine: `enum` would build it too)
    const SimdPlan simd = choice_phase(*this, "choose: plan", [&] { return simd_plan(); });
    if (simd_counts_in_one_pass(simd, chunks)) {
      rates_ = choice_phase(*this, "choose: rates", [&] { return kernel_rates(simd); });
      const double simd_rate = rates_.simd, walk_rate = rates_.walks;
      // Plain strings: a fresh process's first formatted stream output costs 30-40 us.
      const std::string rates =
          std::string("SIMD enumeration (") + simd_path_words(simd) + ", " + std::to_string(t_.states) +
          " states, " + std::to_string(simd.groups) + " counted groups) ran " +
          fixed2(simd_rate / 1e9) + " GB/s per core and " + std::to_string(kLanes) +
          " interleaved table walks " + fixed2(walk_rate / 1e9) +
          " GB/s over the same bytes of this input (fastest of " + std::to_string(rates_.rounds) +
          (rates_.rounds < kRateRounds ? " rounds, decisive or budgeted)" : " rounds)");
      if (simd_rate >= walk_rate) {
        reason = rates + ": every other scheme walks a table at least once per byte, and "
                 "enumeration's speed does not depend on the input, so it is the fastest at any "
                 "thread count (one pass counts each chunk from every start state)";
        decided_by_rates_ = true;
        return Scheme::enumeration;
      }
      opening = rates + ", so not taken on that ground; ";
    }
  }
  std::ostringstream why;
  why << opening;
  size_t slow_misses = 0, sampled = 0;
  const double accuracy = sampled_accuracy(slow_misses, sampled);
  std::string measured = accuracy < 0 ? std::string("unmeasured") : percent(accuracy);
  if (accuracy >= 0) measured += " of " + std::to_string(sampled) + " sampled positions";
  if (accuracy == 0 && sampled == kHopelessAfter && slow_misses == sampled)
    measured += " (none right and no wrong guess met the true path within " +
                std::to_string(kMeetBytes) + " bytes, where sampling stops)";
  if (accuracy >= kSpecAccuracy) {
    why << "speculation from " << t_.lookback << " bytes of lookback was right at " << measured
        << ", so chunks walk the small table and validation is nearly free";
    // spec then costs about kLanes interleaved walks per byte plus its predictions: where
    // SIMD enumeration was timed it ran slower than those walks (the first rule), and every
    // other scheme walks a table at least as wide at least once per byte (fused a wider
    // one, with its histogram; enum from every state until paths meet, then the walk;
    // hspec the same walks at one thread), so nothing is left to probe. (Probes would not
    // help for machines past SIMD's lanes either: for weblog, 342 states, 0.3 ms of probes
    // whose samples priced spec 6x too fast, against runs of 5-10 ms.)
    decided_by_lookback_ = true;
    if (rates_.simd > 0) why << " (at about the timed walks' rate, above enumeration's)";
    reason = why.str();
    return Scheme::spec;
  }
  // Measured (bench/results/fsm.md): where paths meet within 16 KiB, enum enumerates a
  // chunk only that far and walks the rest once (kLanes chunks per thread); where wrong
  // guesses recover within 1 KiB, hspec re-runs little; both beat fused (wider table,
  // fused-state histograms).
  if (paths_meet_on_sample()) {
    why << "from every state, the paths met within " << kEnumMeetBytes << " bytes at all "
        << kMeetPositions << " sampled positions (speculation was right at " << measured
        << "), so each chunk is enumerated only until its paths meet, then walked once";
    // SIMD enumeration advances every state's lane to the chunk's end, merged or not: where
    // it ran slower than the walks (timed: the first rule did not take it) or a plan is past
    // 64 states (vpermi2b over 128 or 256 lanes: 0.2-0.8 GB/s), merging scalar enumeration,
    // which walks once from where the paths meet, runs at about the walks' rate.
    const SimdPlan simd = simd_plan();
    merging_enum_ = simd.path != SimdPath::none && !simd_request(simd_).forced &&
                    (rates_.simd > 0 || simd.wide());
    if (merging_enum_)
      why << " (merging scalar enumeration: SIMD enumeration "
          << (rates_.simd > 0 ? "ran slower than table walks" : "of over 64 states is slow")
          << " and does not stop where paths meet)";
    reason = why.str();
    return Scheme::enumeration;
  }
  // At one thread hspec's rounds run one after another: the same work as spec's sequential
  // validation where chunks were guessed right, more where a chunk was re-run against a
  // predecessor's result that was itself corrected later; so spec there.
  const auto in_rounds = [&] {
    if (threads_ > 1) return Scheme::hspec;
    why << " (at one thread, spec: parallel rounds of re-runs cannot beat one sequential "
        << "validation)";
    return Scheme::spec;
  };
  if (accuracy >= kHspecAccuracy && slow_misses == 0) {
    why << "speculation from " << t_.lookback << " bytes of lookback was right at " << measured
        << " and every wrong guess met the true path within " << kMeetBytes
        << " bytes, so misspeculated chunks are re-run briefly, in parallel rounds";
    const Scheme scheme = in_rounds();
    reason = why.str();
    return scheme;
  }
  if (t_.fused_complete) {
    why << "the fused DFA has " << t_.fused_count << " states (bound " << t_.fused_bound
        << "), so each chunk costs one table lookup per byte";
    reason = why.str();
    return Scheme::fused;
  }
  if (choice_phase(*this, "choose: fused", [&] { return fused_stays_on_sample(); })) {
    why << "the fused DFA exceeds its bound, but walks over " << kFusedWindows
        << " samples of this input stayed inside its " << t_.fused_count << " stored states";
    reason = why.str();
    return Scheme::fused;
  }
  if (t_.converge2_p90 <= kQuickConvergenceBytes) {
    why << "speculation was right at " << measured << ", but at 90% of "
        << "training positions at most 2 paths remain after " << t_.converge2_p90 << " bytes";
    reason = why.str();
    return Scheme::enumeration;
  }
  if (accuracy >= kHspecAccuracy) {
    why << "speculation was right at " << measured << ", so misspeculated"
        << " chunks are re-validated in parallel rounds";
    const Scheme scheme = in_rounds();
    reason = why.str();
    return scheme;
  }
  if (t_.converge4_median != kUnknown) {
    why << "speculation was right at " << measured << ", and half the "
        << "training positions keep at most 4 paths after " << t_.converge4_median << " bytes";
    reason = why.str();
    return Scheme::enumeration;
  }
  why << "the fused DFA exceeds its bound, paths do not converge and speculation was right at "
      << "only " << measured;
  if (rates_.simd > 0)  // fsm/auto/rates.hpp
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
    return Scheme::enumeration;
  }
  reason = why.str();
  return Scheme::seq;
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
  const bool automatic = scheme_named(options.scheme) == Scheme::automatic;
  Pick pick{automatic ? Scheme::seq : scheme_named(options.scheme)};
  std::string choice;
  const double began = omp_get_wtime();
  // The rules explain, probes decide (fsm/auto/probe.hpp); a choice measured earlier in
  // this process over the same sample skips both.
  const ProbeRun probing{threads, chunks, options.simd, options.matches};
  const bool remembered = automatic && choice_phase(engine, "choose: remembered", [&] {
    return remembered_choice(t, data, n, probing, pick, choice);
  });
  if (automatic && !remembered) {
    pick.scheme = engine.choose(chunks, choice);
    if (engine.decided_by_rates_ || engine.decided_by_lookback_) {  // decisive without probes
      choice = (engine.decided_by_rates_ ? "measured rates: " : "by the lookback rule: ") + choice;
      remember_choice(t, data, n, probing, pick, choice);
    } else {
      const RuledChoice ruled{pick.scheme, engine.speculation_hopeless_, engine.rates_.simd,
                              engine.merging_enum_};
      pick = choice_phase(engine, "choose: probes", [&] {
        return measured_choice<Entry>(t, data, n, probing, ruled, choice);
      });
    }
  }
  if (pick.merging_enum) {
    engine.simd_ = "none";
    engine.merging_enum_ = true;  // a remembered choice sets no rule's flag
  }
  if (options.profile && automatic)  // the predictions are a phase of their own
    engine.phases().push_back(
        PhaseTiming{"choose", false, omp_get_wtime() - began - engine.parallel_choose_seconds_, {}});
  const std::string done = engine.run_scheme(pick.scheme, chunks, options.matches);
  result.scheme = scheme_name(pick.scheme);
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
  scheme_named(options.scheme);  // throws for an unknown one
  check_threads(options.threads);
  check_chunks(options.chunks);
  threads = options.threads > 0 ? options.threads : omp_get_max_threads();
  chunks = options.chunks ? options.chunks : size_t(threads) * kLanes;
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
