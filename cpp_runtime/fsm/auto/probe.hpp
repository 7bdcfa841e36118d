// parafuse boostfsm runtime: `auto` measured, not guessed. Where the input is large enough
// for a few short runs to cost little (kProbeMinInput), every scheme runs over the same
// sample of the input, with the run's threads and chunks, and the fastest wins; the rules
// of Engine::choose (fsm/auto/choice.hpp: lookback accuracy, convergence, fused states)
// still run first and are kept in the reason as the explanation.
//
// A probe runs on one thread and records each work unit (a group of chunks) and each
// sequential phase; its time on the run's T threads is projected from them: a parallel
// phase takes the longest-processing-time schedule of its units onto T threads, plus
// kForkJoin once per run (not scaled to the input) where T > 1. Timing T threads directly over a short sample measures the operating
// system's scheduling more than the scheme, on a busy machine above all.
//
// Each scheme's time for the whole input is estimated as fixed + rate * bytes, fitted to
// runs over two lengths (fitted_seconds), not scaled from one run alone, which would charge
// per-chunk work (predictions from every state, enumeration until paths meet) to every
// byte of a window.
//
// The sample: kProbeWindows windows spread evenly over the input, copied into one buffer
// (so that every scheme meets the same bytes, already in memory), each input_bytes /
// kProbeShare / kProbeWindows long within [kProbeMinWindow, kProbeMaxWindow]. Each scheme
// first runs twice over half the first window (the second timed: the first pays the
// scheme's cold code and allocations); the two fastest there (within kScreenRatio of the
// fastest) then run kProbeRounds times over the first window and the whole sample,
// round-robin, keeping their fastest runs: one slow run on a busy machine does not decide,
// and slow schemes cost little. The probes cost at most (0.25 x the schemes + 5) /
// kProbeShare of the input's work.
//
// The probes stay cheap: a partial fused DFA continues as scalar enumeration, so `fused` is
// probed only where its DFA is complete or the rules chose it; schemes over kScreenRatio
// (2) times the fastest on the first window stop there, and when only one is left it
// wins without the rounds. A choice is remembered per process for the same tables, start,
// input size, threads, chunks, SIMD option, matches or not, and sample bytes (a hash of
// the first kKeyWindowBytes of each window, read in place): a repeated run over the same
// input (--repeat, a library called in a loop) chooses once, and says so; so are the
// choices made without probes (the timed kernels, the lookback rule). Matches are in the
// key because a run that lists them pays a second walk that a choice measured without
// them never timed. The probes run with the run's matches too.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "fsm/auto/memory.hpp"
#include "fsm/core/schemes.hpp"

namespace parafuse::fsm {
inline namespace v1 {

constexpr size_t kProbeRounds = 2;
constexpr double kKeepRuleMargin = 0.97;  // the rules' pick stays when this close to the best
constexpr double kScreenRatio = 2.0;  // slower than this on the first window: no rounds
// At most kProbeFinalists schemes run the rounds (every scheme within kScreenRatio can
// cost 0.4 ms of probes against a 5 ms run at 2 threads). (A round's estimates
// fitted to one run per length swung by 5x: two rounds are kept.)
constexpr size_t kProbeFinalists = 2;

constexpr double kForkJoin = 20e-6;  // seconds per parallel phase
constexpr double kMinVaryingShare = 0.1;  // of a probe's time: what scales with the input

// A probe's time on the run's threads: its work, the part of it that is per chunk
// (per_chunk_phase: not scaled to the input) and the fork-joins of its parallel phases
// (once per run: not scaled either; none on one thread).
struct ProbeTime {
  double work = 0, per_chunk = 0, forkjoins = 0;
};

// Phases whose work is per chunk, whatever the chunk's length: composing the starts, and
// where paths meet (the merging scalar enumeration: fsm/auto/choice.hpp) enumerating until
// they meet and recounting the bytes before; re-running misspeculated chunks until the
// true path meets the guessed one. (Scaled with the input, they would estimate merging
// `enum` of a 200-state machine 3 times slower than it runs, and screen it out.)
inline bool per_chunk_phase(const std::string& name, bool paths_meet) {
  return name == "compose" || name == "validate" || name == "re-validate" ||
         (paths_meet && (name == "enumerate" || name == "recount prefixes"));
}

// The phases' time on `threads` threads (see above). The fork-joins stay out of the time
// scaled from the sample to the input: scaled (512 times for 16 MiB), they would charge a
// scheme of 3 parallel phases 30 ms it never spends.
inline ProbeTime projected_time(const std::vector<PhaseTiming>& phases, int threads,
                                bool paths_meet) {
  ProbeTime time;
  for (const PhaseTiming& phase : phases) {
    double seconds = phase.seconds;
    if (phase.parallel && !phase.units.empty()) {
      std::vector<double> units = phase.units, load(size_t(std::max(1, threads)), 0.0);
      std::sort(units.rbegin(), units.rend());
      for (double unit : units) *std::min_element(load.begin(), load.end()) += unit;
      seconds = *std::max_element(load.begin(), load.end());
      time.forkjoins += threads > 1 ? kForkJoin : 0.0;
    }
    time.work += seconds;
    if (per_chunk_phase(phase.name, paths_meet)) time.per_chunk += seconds;
  }
  return time;
}

// The work for n bytes from one run over `bytes` (the first window): its per-chunk part
// and at least `fixed_floor` (speculation's predictions) unscaled, the rest scaled, at
// least kMinVaryingShare of the run.
inline double scaled_seconds(const ProbeTime& time, size_t bytes, size_t n, double fixed_floor) {
  const double fixed = std::min(time.work, time.per_chunk + fixed_floor);
  const double varying = std::max(time.work - fixed, kMinVaryingShare * time.work);
  return std::min(fixed, time.work) + varying / double(bytes) * double(n);
}

// The work for n bytes from runs over `small` and `large` bytes of the sample (the same
// chunks; each the fastest of kProbeRounds): a fixed part (per-chunk work: predictions,
// enumeration until paths meet, flushing a walk's counters) and a rate, at least
// kMinVaryingShare of the larger run's time per byte; the fixed part at least
// `fixed_floor`. (A rate from the whole sample alone would charge per-chunk work to every
// byte.)
inline double fitted_seconds(double small_seconds, size_t small, double large_seconds,
                             size_t large, size_t n, double fixed_floor) {
  const double floor_rate = kMinVaryingShare * large_seconds / double(large);
  const double rate = large > small ? std::max((large_seconds - small_seconds) /
                                                   double(large - small), floor_rate)
                                    : large_seconds / double(large);
  const double fixed = std::max(fixed_floor, std::max(0.0, large_seconds - rate * double(large)));
  return fixed + rate * double(n);
}



// What the rules of Engine::choose leave to the probes: their pick, whether speculation is
// hopeless, SIMD enumeration's timed rate per core (0: not timed), the lookups a lookback
// prediction took on the sample (0: not sampled), and whether `enum` is the merging scalar
// enumeration (the rules' paths-meet rule past SIMD's speed: fsm/auto/choice.hpp).
struct RuledChoice {
  Scheme scheme = Scheme::seq;
  bool speculation_hopeless = false;
  double simd_rate = 0;
  double prediction_lookups = 0;
  bool merging_enum = false;
};

struct SchemeProbe {
  Scheme scheme = Scheme::seq;
  double seconds = 0;  // the fastest run over the sample
  bool screened_out = false;  // not a finalist on half a window: not run over the sample
  bool from_rate = false;     // enum's time from its timed rate, not probed
};

inline std::vector<uint8_t> probe_sample(const uint8_t* data, size_t n) {
  const size_t window =
      std::clamp(n / kProbeShare / kProbeWindows, kProbeMinWindow, kProbeMaxWindow);
  std::vector<uint8_t> sample;
  for (size_t w = 0; w < kProbeWindows; ++w) {
    const size_t begin = (n - std::min(n, window)) * w / (kProbeWindows - 1);
    sample.insert(sample.end(), data + begin, data + begin + std::min(window, n - begin));
  }
  return sample;
}

// Whether probing `scheme` is cheap and can win: enumeration from every state of a big
// machine (and a partial fused DFA, which continues as enum) only where the rules found
// that paths meet; speculation not where most guesses were wrong and none of the wrong
// ones met the true path within 1 KiB (each chunk would run about twice); hspec not at one
// thread, where its rounds run one after another and cannot beat spec's one validation.
inline bool cheap_to_probe(const Tables& t, Scheme scheme, const RuledChoice& ruled,
                           int threads) {
  switch (scheme) {
    case Scheme::enumeration:
      return t.states <= simd_cheap_enum_states() || ruled.scheme == Scheme::enumeration;
    case Scheme::fused: return t.fused_complete || ruled.scheme == Scheme::fused;
    case Scheme::hspec: return threads >= 2 && !ruled.speculation_hopeless;
    case Scheme::spec: return !ruled.speculation_hopeless;
    default: return true;
  }
}

// Speculation's fixed cost in lookups per thread: each chunk but the first predicted from
// every state over the lookback. Priced from the lookups a prediction took on the lookback
// sample (paths merge as they run: a 200-state machine that resets often took ~3% of
// states x lookback), else from the bound that predict() keeps (kPredictLookups).
inline double prediction_lookups(const Tables& t, const RuledChoice& ruled, size_t chunks,
                                 int threads) {
  const double unmerged = double(t.states) * t.lookback;
  const double each = ruled.prediction_lookups > 0 ? ruled.prediction_lookups
                      : unmerged > double(kPredictLookups) ? double(t.lookback) : unmerged;
  return double(chunks - 1) * each / double(std::max(1, threads));
}

// The schemes worth probing over `sample` (probe_sample), each with its time for the
// whole input of n bytes estimated as fixed + rate * n plus its fork-joins: screened from
// a run over half the first window (scaled_seconds), then fitted to runs over the first window
// and the whole sample in each round (fitted_seconds; the first window is timed again,
// warm). Speculation's fixed part is at least its predictions (prediction_lookups, at
// seq's time per byte).
// SIMD enumeration's rate per core where auto timed it (fsm/auto/rates.hpp): then enum is
// not probed, its time being n / (threads x rate) plus one fork-join, unless it runs as the
// merging scalar enumeration (RuledChoice), which is probed.
template <class Entry>
std::vector<SchemeProbe> probe_schemes(const Tables& t, const std::vector<uint8_t>& sample,
                                       size_t n, const ProbeRun& run, const RuledChoice& ruled) {
  const int threads = run.threads;
  const size_t chunks = run.chunks;
  std::vector<SchemeProbe> probes;
  for (Scheme scheme :
       {Scheme::seq, Scheme::enumeration, Scheme::fused, Scheme::spec, Scheme::hspec})
    if (cheap_to_probe(t, scheme, ruled, threads)) probes.push_back(SchemeProbe{scheme, 1e300});
  const bool enum_from_rate = ruled.simd_rate > 0 && !ruled.merging_enum;
  for (SchemeProbe& probe : probes)
    if (probe.scheme == Scheme::enumeration && enum_from_rate)
      probe.seconds = double(n) / (ruled.simd_rate * threads) + kForkJoin, probe.from_rate = true;
  const auto timed = [&](Scheme scheme, size_t bytes) {
    Engine<Entry> engine(t, sample.data(), bytes, 1);
    engine.simd_ = scheme == Scheme::enumeration && ruled.merging_enum ? std::string("none")
                                                                       : run.simd;
    engine.profile_ = true;
    engine.run_scheme(scheme, chunks, run.matches);
    return projected_time(engine.phases(), threads, ruled.merging_enum);
  };
  const size_t screen = std::max<size_t>(1, sample.size() / kProbeWindows);
  const size_t whole = sample.size(), half = std::max<size_t>(1, screen / 2);
  // Speculation's predictions: a fixed cost, priced at seq's time per byte (seq is probed
  // first) per lookup (prediction_lookups).
  const double predictions = prediction_lookups(t, ruled, chunks, threads);
  double seq_per_byte = 0;
  std::vector<double> fixed_floor(probes.size(), 0.0), first(probes.size(), 1e300);
  std::vector<double> forkjoins(probes.size(), 0.0);
  // Screening over the first window: a scheme kScreenRatio times slower than the fastest
  // there stops (its estimate from the first window stays), so slow schemes cost little.
  double fastest = 1e300;
  for (size_t i = 0; i < probes.size(); ++i) {
    if (probes[i].from_rate) {
      fastest = std::min(fastest, probes[i].seconds);
      continue;
    }
    timed(probes[i].scheme, half);  // untimed: the scheme's code and allocations, cold
    const ProbeTime window = timed(probes[i].scheme, half);
    forkjoins[i] = window.forkjoins;
    if (probes[i].scheme == Scheme::seq) seq_per_byte = window.work / double(half);
    if (probes[i].scheme == Scheme::spec || probes[i].scheme == Scheme::hspec)
      fixed_floor[i] = predictions * seq_per_byte;
    probes[i].seconds = scaled_seconds(window, half, n, fixed_floor[i]) + forkjoins[i];
    fastest = std::min(fastest, probes[i].seconds);
  }
  // The finalists: the kProbeFinalists fastest on the first window, within kScreenRatio.
  std::vector<double> order;
  for (const SchemeProbe& probe : probes) order.push_back(probe.seconds);
  std::sort(order.begin(), order.end());
  const double last_finalist = order[std::min(order.size(), kProbeFinalists) - 1];
  size_t kept = 0;
  for (SchemeProbe& probe : probes) {
    probe.screened_out = probe.seconds > kScreenRatio * fastest || probe.seconds > last_finalist;
    kept += !probe.screened_out;
  }
  std::vector<double> sampled(probes.size(), 1e300);
  for (size_t round = 0; round < kProbeRounds && kept > 1; ++round) {
    for (size_t i = 0; i < probes.size(); ++i)
      if (!probes[i].screened_out && !probes[i].from_rate) {
        first[i] = std::min(first[i], timed(probes[i].scheme, screen).work);
        sampled[i] = std::min(sampled[i], timed(probes[i].scheme, whole).work);
        probes[i].seconds =
            fitted_seconds(first[i], screen, sampled[i], whole, n, fixed_floor[i]) + forkjoins[i];
      }
  }
  return probes;
}


// The scheme `auto` runs: the fastest probe, or the rules' pick where the input is too
// small to probe or the pick is within kKeepRuleMargin of the fastest. `reason` holds
// the rules' reason on entry and the whole explanation on return.
template <class Entry>
Pick measured_choice(const Tables& t, const uint8_t* data, size_t n, const ProbeRun& run,
                     const RuledChoice& ruled, std::string& reason) {
  const int threads = run.threads;
  const size_t chunks = run.chunks;
  const auto with_path = [&](Scheme scheme) {
    return Pick{scheme, scheme == Scheme::enumeration && ruled.merging_enum};
  };
  // The probes' work is about 1.2% of one thread's over 16 MiB: per thread of the run the
  // input must be that large, or they would cost more than ~1.5% of the run's time.
  const size_t least = probe_min_input() * size_t(std::max(1, threads));
  if (n < least || chunks < 2 || n < kProbeWindows) {
    reason = "by the analysis rules (the input is under " + std::to_string(least) +
             " bytes" + (threads > 1 ? " at " + std::to_string(threads) + " threads" : "") +
             ", too small to probe cheaply): " + reason;
    return with_path(ruled.scheme);
  }
  const std::vector<uint8_t> bytes = probe_sample(data, n);
  const std::vector<SchemeProbe> probes = probe_schemes<Entry>(t, bytes, n, run, ruled);
  const size_t sample = bytes.size();
  const SchemeProbe* best = &probes[0];
  const SchemeProbe* rule = nullptr;  // not probed: too costly to enumerate
  for (const SchemeProbe& probe : probes) {
    if (probe.seconds < best->seconds) best = &probe;
    if (probe.scheme == ruled.scheme) rule = &probe;
  }
  const SchemeProbe* pick =
      rule && best->seconds >= kKeepRuleMargin * rule->seconds ? rule : best;
  std::ostringstream why;
  why.setf(std::ios::fixed);
  why.precision(2);
  why << "measured: every scheme ran over the same " << (sample >> 10) << " KiB sample ("
      << kProbeWindows << " windows spread over the input, " << chunks
      << " chunks, one thread, projected to " << threads << " threads and to the whole input from "
      << "a fixed cost and a rate fitted to runs over a window and the whole sample, fastest of "
      << kProbeRounds << "):";
  for (const SchemeProbe& probe : probes)
    why << " " << scheme_name(probe.scheme) << " " << double(n) / probe.seconds / 1e9 << " GB/s"
        << (probe.from_rate ? " (from its timed rate, not probed)"
            : probe.screened_out ? " (half a window only)" : "") << (&probe == &probes.back() ? ";" : ",");
  if (ruled.speculation_hopeless)
    why << " (spec and hspec not probed: most lookback guesses were wrong and none met the true"
        << " path within 1 KiB);";
  else if (threads < 2)
    why << " (hspec not probed at one thread);";
  if (!ruled.speculation_hopeless)
    why << " speculation's predictions priced at "
        << prediction_lookups(t, ruled, chunks, 1) / double(std::max<size_t>(1, chunks - 1))
        << " lookups per chunk (" << (ruled.prediction_lookups > 0 ? "as measured on the lookback "
                                      "sample" : "unmeasured: the most predict() may take") << ");";
  why << " picked " << scheme_name(pick->scheme)
      << (pick == rule && pick != best ? " (the rules' pick, within 3% of the fastest)" : "")
      << "; the analysis rules would pick " << scheme_name(ruled.scheme) << ": " << reason;
  reason = why.str();
  remember_choice(t, data, n, run, with_path(pick->scheme), reason);
  return with_path(pick->scheme);
}

}  // namespace v1
}  // namespace parafuse::fsm
