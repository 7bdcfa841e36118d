// parafuse boostfsm runtime: `auto` measured, not guessed. Where the input is large enough
// for a few short runs to cost little (kProbeMinInput), every scheme runs over the same
// sample of the input, with the run's threads and chunks, and the fastest wins; the rules
// of Engine::choose (fsm/auto/choice.hpp: lookback accuracy, convergence, fused states)
// still run first and are kept in the reason as the explanation.
//
// A probe runs on one thread and records each work unit (a group of chunks) and each
// sequential phase; its time on the run's T threads is projected from them: a parallel
// phase takes the longest-processing-time schedule of its units onto T threads, plus
// kForkJoin once per run (not scaled to the input) where T > 1. Timing T threads directly
// over a short sample measures the operating system's scheduling more than the scheme, on
// a busy machine above all. Where the run has T > 1 threads, the probes of different
// schemes run side by side on up to T threads (side_by_side), each still a run of one
// thread, as the run's own threads run beside each other.
//
// Each scheme's time for the whole input is its per-chunk phases as measured (speculation's
// predictions, enumeration until paths meet, re-runs of misspeculated chunks: the same
// chunks as the run's, so the same work) plus a rate per byte for the rest, fitted to runs
// over half a window and the whole sample and bounded by the whole sample's rate
// (fitted_seconds; screening scales the half window's alone: scaled_seconds).
//
// The sample: kProbeWindows windows spread evenly over the input, copied into one buffer
// (so that every scheme meets the same bytes, already in memory), each input_bytes /
// kProbeShare / kProbeWindows long within [kProbeMinWindow, kProbeMaxWindow]. Each scheme
// first runs twice over half the first window (the second timed: the first pays the
// scheme's cold code and allocations); the two fastest there (within kScreenRatio of the
// fastest), and the rules' pick whatever its time there, then run up to kProbeRounds
// times over the whole sample, keeping their fastest
// runs: one slow run on a busy machine does not decide, and slow schemes cost little. The
// rounds stop after the first where it decided (probes_decided). The probes cost at most
// (0.25 x the schemes + 4) / kProbeShare of the input's work.
//
// The probes stay cheap: `spec` and `hspec` run as one probe (Engine::probe_speculation:
// one prediction and walk, then each validation); a partial fused DFA continues as scalar
// enumeration, so `fused` is probed only where its DFA is complete or the rules chose it;
// schemes over kScreenRatio (2) times the fastest on the first window stop there, and when
// only one is left it wins without the rounds. A choice is remembered per process for the
// same tables, start, input size, threads, chunks, SIMD option, matches or not, and sample
// bytes (a hash of the first kKeyWindowBytes of each window, read in place): a repeated
// run over the same input (--repeat, a library called in a loop) chooses once, and says
// so; so are the choices made without probes (the timed kernels, the lookback rule).
// Matches are in the key because a run that lists them pays a second walk that a choice
// measured without them never timed. The probes run with the run's matches too.
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
// cost 0.4 ms of probes against a 5 ms run at 2 threads).
constexpr size_t kProbeFinalists = 2;

constexpr double kForkJoin = 20e-6;  // seconds per parallel phase
constexpr double kMinVaryingShare = 0.1;  // of a probe's time: what scales with the input

// A probe's time on the run's threads: its work, the part of it that is per chunk
// (per_chunk_phase: not scaled to the input) and the fork-joins of its parallel phases
// (once per run: not scaled either; none on one thread).
struct ProbeTime {
  double work = 0, per_chunk = 0, forkjoins = 0;
};

// Phases whose work is per chunk, whatever the chunk's length: speculation's predictions
// (from every state over the lookback before each chunk), composing the starts, and
// where paths meet (the merging scalar enumeration: fsm/auto/choice.hpp) enumerating until
// they meet and recounting the bytes before; re-running misspeculated chunks until the
// true path meets the guessed one. (Scaled with the input, they would estimate merging
// `enum` of a 200-state machine 3 times slower than it runs, and screen it out.)
inline bool per_chunk_phase(const std::string& name, bool paths_meet) {
  return name == "predict" || name == "compose" || name == "validate" || name == "re-validate" ||
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

// The work for n bytes from one run over `bytes` of the sample: its per-chunk part
// unscaled, the rest scaled, at least kMinVaryingShare of the run.
inline double scaled_seconds(const ProbeTime& time, size_t bytes, size_t n) {
  const double fixed = std::min(time.work, time.per_chunk);
  const double varying = std::max(time.work - fixed, kMinVaryingShare * time.work);
  return fixed + varying / double(bytes) * double(n);
}

// The work for n bytes from runs over `small` and `large` bytes of the sample (the same
// chunks): the larger run's per-chunk phases as measured, and a rate per byte fitted to
// what the two runs spent beyond them (each chunk's walk also pays its start and end: a
// 64 KiB probe walks 15-25% slower per byte than a run over 32 MiB, and scaled alone it
// would price every walking scheme that much too slow against SIMD enumeration's timed
// rate). The fitted rate is kept within [kLeastFitShare, 1] of the larger run's scaled
// one: where the smaller run was the one a busy core slowed, the difference alone would
// price a scheme several times too fast.
constexpr double kLeastFitShare = 0.6;
inline double fitted_seconds(const ProbeTime& small, size_t small_bytes, const ProbeTime& large,
                             size_t large_bytes, size_t n) {
  const double beyond = std::max(large.work - large.per_chunk, kMinVaryingShare * large.work);
  const double scaled_rate = beyond / double(large_bytes);
  double rate = scaled_rate;
  if (large_bytes > small_bytes)
    rate = std::clamp((beyond - (small.work - small.per_chunk)) / double(large_bytes - small_bytes),
                      kLeastFitShare * scaled_rate, scaled_rate);
  return std::max(large.per_chunk, large.work - rate * double(large_bytes)) + rate * double(n);
}

// What the rules of Engine::choose leave to the probes: their pick, whether speculation is
// hopeless, SIMD enumeration's timed rate per core (0: not timed), and whether `enum` is
// the merging scalar
// enumeration (the rules' paths-meet rule past SIMD's speed: fsm/auto/choice.hpp).
struct RuledChoice {
  Scheme scheme = Scheme::seq;
  bool speculation_hopeless = false;
  double simd_rate = 0;
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

// body(0) ... body(count - 1), side by side on up to `threads` threads where the run has
// more than one: each is a probe on one thread, as each of the run's threads runs its
// chunks beside the others (sharing the caches and memory as they do), and the probes take
// about half the time at two threads. Which thread takes which probe varies (dynamic), so a
// core that another process holds does not slow one scheme in every round.
template <class Body>
void side_by_side(size_t count, int threads, Body&& body) {
  const int team = int(std::min<size_t>(count, size_t(std::max(1, threads))));
#pragma omp parallel for num_threads(std::max(1, team)) schedule(dynamic, 1) if (team > 1)
  for (long job = 0; job < long(count); ++job) body(size_t(job));
}

// The probes run in jobs: one scheme each, but `spec` and `hspec` together where both are
// probed (Engine::probe_speculation: they predict and walk alike and differ only in how
// they validate, so one run gives both).
inline std::vector<std::vector<size_t>> probe_jobs(const std::vector<SchemeProbe>& probes,
                                                   const std::vector<size_t>& members) {
  std::vector<std::vector<size_t>> jobs;
  size_t spec = probes.size(), hspec = probes.size();
  for (size_t i : members) {
    if (probes[i].scheme == Scheme::spec) spec = i;
    else if (probes[i].scheme == Scheme::hspec) hspec = i;
    else jobs.push_back({i});
  }
  if (spec < probes.size() && hspec < probes.size()) jobs.push_back({spec, hspec});
  else if (spec < probes.size()) jobs.push_back({spec});
  else if (hspec < probes.size()) jobs.push_back({hspec});
  return jobs;
}

// Whether the rounds can stop: after the first, the fastest finalist leads by kDecisiveLead
// or more (a busy core slows a run by less than that, rarely) every other finalist that
// did not come from its own run (spec and hspec: the same predictions and walks, timed
// together, so a slow spell slowed both alike, only their validations tell them apart, and
// another round cannot part them). So where the best is spec, hspec beside it and enum's
// time comes from its rate 4x slower, one round decides (random160x16 at 2 threads spent
// 50 us of its 0.5 ms of probes on a second).
constexpr double kDecisiveLead = 1.5;
inline bool probes_decided(const std::vector<SchemeProbe>& probes,
                           const std::vector<size_t>& finalists,
                           const std::vector<std::vector<size_t>>& jobs) {
  if (finalists.empty()) return true;
  size_t best = finalists[0];
  for (size_t i : finalists)
    if (probes[i].seconds < probes[best].seconds) best = i;
  const auto same_run = [&](size_t i) {
    for (const std::vector<size_t>& job : jobs)
      if (std::count(job.begin(), job.end(), best) && std::count(job.begin(), job.end(), i))
        return true;
    return false;
  };
  for (size_t i : finalists)
    if (i != best && !same_run(i) && probes[i].seconds < kDecisiveLead * probes[best].seconds)
      return false;
  return true;
}

// Marks the probes that stop after the first window: slower than kScreenRatio times the
// fastest there, or past the kProbeFinalists fastest. The rules' pick (`rules`) is always a
// finalist: one run over half a window decides nothing against it (a 1 ms slow spell of a
// shared core priced random256x16's `hspec` at 0.57 GB/s there, under `seq`, and auto ran
// `seq`, 5x slower, in 4 processes of 15).
inline void screen_probes(std::vector<SchemeProbe>& probes, Scheme rules) {
  std::vector<double> order;
  for (const SchemeProbe& probe : probes) order.push_back(probe.seconds);
  std::sort(order.begin(), order.end());
  if (order.empty()) return;
  const double fastest = order[0];
  const double last_finalist = order[std::min(order.size(), kProbeFinalists) - 1];
  for (SchemeProbe& probe : probes)
    probe.screened_out = probe.scheme != rules && (probe.seconds > kScreenRatio * fastest ||
                                                   probe.seconds > last_finalist);
}

// The schemes worth probing over `sample` (probe_sample), each with its time for the
// whole input of n bytes plus its fork-joins: screened from a run over half the first
// window (scaled_seconds), then fitted to that run and the fastest of the rounds' runs over
// the whole sample (fitted_seconds).
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
  // The job's schemes over the first `bytes` of the sample: their times in `out`, by probe
  // index (each job writes its own). Their walks count from their first byte in the
  // mode the job's untimed first run settled in (`settling`), as a run's chunks of MiBs
  // count after their first KiB: counted sparsely, the 1 KiB chunks of half a window at
  // 8 chunks mispredicted on every report where reports are dense, and a random DFA's
  // `spec` was screened at a fifth of its speed.
  std::vector<Counting> settled(probes.size(), Counting::sparse);
  const auto timed = [&](const std::vector<size_t>& job, size_t bytes,
                         std::vector<ProbeTime>& out, bool settling = false) {
    Engine<Entry> engine(t, sample.data(), bytes, 1);
    engine.counting_from_ = settled[job[0]];
    engine.counting_settled_ = settling ? &settled[job[0]] : nullptr;
    const Scheme scheme = probes[job[0]].scheme;
    engine.simd_ = scheme == Scheme::enumeration && ruled.merging_enum ? std::string("none")
                                                                       : run.simd;
    engine.profile_ = true;
    if (job.size() == 1) {
      engine.run_scheme(scheme, chunks, run.matches);
      out[job[0]] = projected_time(engine.phases(), threads, ruled.merging_enum);
    } else {
      std::vector<PhaseTiming> spec, hspec;
      engine.probe_speculation(chunks, run.matches, spec, hspec);
      out[job[0]] = projected_time(spec, threads, false);
      out[job[1]] = projected_time(hspec, threads, false);
    }
    for (size_t i : job) settled[i] = settled[job[0]];
  };
  const size_t screen = std::max<size_t>(1, sample.size() / kProbeWindows);
  const size_t whole = sample.size(), half = std::max<size_t>(1, screen / 2);
  // Screening over half the first window: a scheme kScreenRatio times slower than the
  // fastest there stops (its estimate from that run stays), so slow schemes cost little.
  std::vector<size_t> measured;
  for (size_t i = 0; i < probes.size(); ++i)
    if (!probes[i].from_rate) measured.push_back(i);
  std::vector<std::vector<size_t>> jobs = probe_jobs(probes, measured);
  std::vector<double> forkjoins(probes.size(), 0.0);
  std::vector<ProbeTime> times(probes.size());
  side_by_side(jobs.size(), threads, [&](size_t job) {
    timed(jobs[job], half, times, true);  // untimed: cold code and allocations; settles
    timed(jobs[job], half, times);
  });
  for (size_t i = 0; i < probes.size(); ++i) {
    if (!probes[i].from_rate) {
      forkjoins[i] = times[i].forkjoins;
      probes[i].seconds = scaled_seconds(times[i], half, n) + forkjoins[i];
    }
  }
  screen_probes(probes, ruled.scheme);
  std::vector<size_t> finalists, probed;
  for (size_t i = 0; i < probes.size(); ++i) {
    if (!probes[i].screened_out) finalists.push_back(i);
    if (!probes[i].screened_out && !probes[i].from_rate) probed.push_back(i);
  }
  jobs = probe_jobs(probes, probed);
  std::vector<ProbeTime> fastest_run(probes.size());
  for (size_t i : probed) fastest_run[i].work = 1e300;
  for (size_t round = 0; round < kProbeRounds && finalists.size() > 1; ++round) {
    std::vector<ProbeTime> all(probes.size());
    side_by_side(jobs.size(), threads, [&](size_t job) { timed(jobs[job], whole, all); });
    for (size_t i : probed) {
      if (all[i].work < fastest_run[i].work) fastest_run[i] = all[i];
      probes[i].seconds = fitted_seconds(times[i], half, fastest_run[i], whole, n) + forkjoins[i];
    }
    if (probes_decided(probes, finalists, jobs)) break;
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
      << " chunks, one thread, projected to " << threads << " threads and to the whole input: "
      << "per-chunk work as measured, a rate per byte for the rest; fastest of up to "
      << kProbeRounds << " rounds):";
  for (const SchemeProbe& probe : probes)
    why << " " << scheme_name(probe.scheme) << " " << double(n) / probe.seconds / 1e9 << " GB/s"
        << (probe.from_rate ? " (from its timed rate, not probed)"
            : probe.screened_out ? " (half a window only)" : "")
        << (&probe == &probes.back() ? ";" : ",");
  if (ruled.speculation_hopeless)
    why << " (spec and hspec not probed: most lookback guesses were wrong and none met the true"
        << " path within 1 KiB);";
  else if (threads < 2)
    why << " (hspec not probed at one thread);";
  if (!ruled.speculation_hopeless)
    why << " speculation's predictions measured as a cost per chunk, not scaled to the input;";
  why << " picked " << scheme_name(pick->scheme)
      << (pick == rule && pick != best ? " (the rules' pick, within 3% of the fastest)" : "")
      << "; the analysis rules would pick " << scheme_name(ruled.scheme) << ": " << reason;
  reason = why.str();
  remember_choice(t, data, n, run, with_path(pick->scheme), reason);
  return with_path(pick->scheme);
}

}  // namespace v1
}  // namespace parafuse::fsm
