// parafuse boostfsm runtime: `auto` measured, not guessed. Where the input is large enough
// for a few short runs to cost little (kProbeMinInput), every scheme runs over the same
// sample of the input, with the run's threads and chunks, and the fastest wins; the rules
// of Engine::choose (fsm/auto_choice.hpp: lookback accuracy, convergence, fused states)
// still run first and are kept in the reason as the explanation.
//
// A probe runs on one thread and records each work unit (a group of chunks) and each
// sequential phase; its time on the run's T threads is projected from them: a parallel
// phase takes the longest-processing-time schedule of its units onto T threads plus
// kForkJoin. Timing T threads directly over a short sample measures the operating
// system's scheduling more than the scheme, on a busy machine above all.
//
// Each scheme's time for the whole input is estimated as fixed + rate * bytes (see
// probe_schemes), not scaled from the sample alone, which charged speculation's fixed
// per-chunk predictions (from every state of a big machine) to every byte of a window.
//
// The sample: kProbeWindows windows spread evenly over the input, copied into one buffer
// (so that every scheme meets the same bytes, already in memory), each input_bytes /
// kProbeShare / kProbeWindows long within [kProbeMinWindow, kProbeMaxWindow]. Each scheme
// first runs over the first window alone; those within kScreenRatio of the fastest there
// then run kProbeRounds times over the whole sample, round-robin, keeping their fastest
// run: one slow run on a busy machine does not decide, and slow schemes cost little.
// The probes cost about (1 + 2 * the schemes kept) / kProbeShare of the input's work.
//
// Cheaper than before: a partial fused DFA continues as scalar enumeration, so `fused` is
// probed only where its DFA is complete or the rules chose it; schemes over kScreenRatio
// (2) times the fastest on the first window stop there, and when only one is left it
// wins without the rounds. A choice is remembered per process for the same tables, start,
// input size, threads, chunks, SIMD option, matches or not, and sample bytes (a hash of
// the first kKeyWindowBytes of each window, read in place): a repeated run over the same
// input (--repeat, a library called in a loop) chooses once, and says so; so are the
// choices made without probes (the timed kernels, the lookback rule). (Before: the key
// left out --matches, so a run listing matches reused a choice measured without them,
// whose second walk it never paid.) The probes run with the run's matches too.
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

#include "fsm/schemes.hpp"

namespace parafuse::fsm {
inline namespace v1 {

constexpr size_t kProbeMinInput = size_t(16) << 20;
constexpr size_t kProbeShare = 512, kProbeWindows = 4, kProbeRounds = 2;
constexpr size_t kProbeMinWindow = size_t(8) << 10, kProbeMaxWindow = size_t(1) << 20;
constexpr double kKeepRuleMargin = 0.97;  // the rules' pick stays when this close to the best
constexpr double kScreenRatio = 2.0;  // slower than this on the first window: no rounds

constexpr double kForkJoin = 20e-6;  // seconds per parallel phase
constexpr double kMinVaryingShare = 0.1;  // of a probe's time: what scales with the input

// The phases' time on `threads` threads (see above).
inline double projected_seconds(const std::vector<PhaseTiming>& phases, int threads) {
  double total = 0;
  for (const PhaseTiming& phase : phases) {
    if (!phase.parallel || phase.units.empty()) {
      total += phase.seconds;
      continue;
    }
    std::vector<double> units = phase.units, load(size_t(std::max(1, threads)), 0.0);
    std::sort(units.rbegin(), units.rend());
    for (double unit : units) *std::min_element(load.begin(), load.end()) += unit;
    total += *std::max_element(load.begin(), load.end()) + kForkJoin;
  }
  return total;
}

// kProbeMinInput, or PARAFUSE_FSM_PROBE_MIN_BYTES where set (tests probe small inputs).
inline size_t probe_min_input() {
  const char* text = std::getenv("PARAFUSE_FSM_PROBE_MIN_BYTES");
  return text && *text ? size_t(std::strtoull(text, nullptr, 10)) : kProbeMinInput;
}

constexpr size_t kRememberedChoices = 256;

// FNV-1a over the sample's 8-byte words (and its tail): which input a choice was made on.
inline uint64_t sample_hash(const std::vector<uint8_t>& bytes) {
  uint64_t hash = 0xcbf29ce484222325ull, word = 0;
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    std::memcpy(&word, bytes.data() + i, 8);
    hash = (hash ^ word) * 0x100000001b3ull;
  }
  for (; i < bytes.size(); ++i) hash = (hash ^ bytes[i]) * 0x100000001b3ull;
  return hash;
}

// What a run asks of its probes: the same threads, chunks, SIMD option and matches.
struct ProbeRun {
  int threads = 1;
  size_t chunks = 1;
  std::string simd;
  bool matches = false;
};

struct SchemeProbe {
  std::string scheme;
  double seconds = 0;  // the fastest run over the sample
  bool screened_out = false;  // slow over the first window: not run over the whole sample
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
// ones met the true path within 1 KiB (each chunk would run about twice).
inline bool cheap_to_probe(const Tables& t, const std::string& scheme, const std::string& ruled,
                           bool speculation_hopeless) {
  if (scheme == "enum") return t.states <= simd_cheap_enum_states() || ruled == "enum";
  if (scheme == "fused") return t.fused_complete || ruled == "fused";
  if (scheme == "spec" || scheme == "hspec") return !speculation_hopeless;
  return true;
}

// The schemes worth probing over `sample` (probe_sample), each with its time for the
// whole input of n bytes estimated as fixed + rate * n: the fixed part is speculation's
// predictions (chunks x states x lookback lookups, at seq's measured cost), the rate
// from the first window, then from the whole sample (fastest of kProbeRounds). A short
// window alone would charge a big machine's per-chunk predictions to every byte.
// `simd_rate`: SIMD enumeration's rate per core where auto timed it (fsm/auto_rates.hpp):
// then enum is not probed, its time being n / (threads x rate) plus one fork-join.
template <class Entry>
std::vector<SchemeProbe> probe_schemes(const Tables& t, const std::vector<uint8_t>& sample,
                                       size_t n, const ProbeRun& run, const std::string& ruled,
                                       bool speculation_hopeless, double simd_rate) {
  const int threads = run.threads;
  const size_t chunks = run.chunks;
  std::vector<SchemeProbe> probes;
  for (const char* scheme : {"seq", "enum", "fused", "spec", "hspec"})
    if (cheap_to_probe(t, scheme, ruled, speculation_hopeless))
      probes.push_back(SchemeProbe{scheme, 1e300});
  const bool enum_from_rate = simd_rate > 0;
  for (SchemeProbe& probe : probes)
    if (probe.scheme == "enum" && enum_from_rate)
      probe.seconds = double(n) / (simd_rate * threads) + kForkJoin, probe.from_rate = true;
  const auto timed = [&](const std::string& scheme, size_t bytes) {
    Engine<Entry> engine(t, sample.data(), bytes, 1);
    engine.simd_ = run.simd;
    engine.profile_ = true;
    engine.run_scheme(scheme, chunks, run.matches);
    return projected_seconds(engine.phases(), threads);
  };
  const size_t screen = std::max<size_t>(1, sample.size() / kProbeWindows);
  // Speculation predicts each chunk but the first from every state over the lookback:
  // a fixed cost, priced at seq's measured time per byte (seq is probed first).
  const double predictions = double(chunks - 1) * t.states * t.lookback / double(threads);
  double seq_per_byte = 0;
  std::vector<double> fixed(probes.size(), 0.0);
  const auto estimate = [&](size_t i, double seconds, size_t bytes) {
    const double varying = std::max(seconds - fixed[i], kMinVaryingShare * seconds);
    return std::min(fixed[i], seconds) + varying / double(bytes) * double(n);
  };
  // Screening over the first window: a scheme kScreenRatio times slower than the fastest
  // there stops (its estimate from the first window stays), so slow schemes cost little.
  double fastest = 1e300;
  for (size_t i = 0; i < probes.size(); ++i) {
    if (probes[i].from_rate) {
      fastest = std::min(fastest, probes[i].seconds);
      continue;
    }
    const double seconds = timed(probes[i].scheme, screen);
    if (probes[i].scheme == "seq") seq_per_byte = seconds / double(screen);
    if (probes[i].scheme == "spec" || probes[i].scheme == "hspec") fixed[i] = predictions * seq_per_byte;
    probes[i].seconds = estimate(i, seconds, screen);
    fastest = std::min(fastest, probes[i].seconds);
  }
  size_t kept = 0;
  for (SchemeProbe& probe : probes) {
    probe.screened_out = probe.seconds > kScreenRatio * fastest;
    kept += !probe.screened_out;
  }
  for (size_t round = 0; round < kProbeRounds && kept > 1; ++round)
    for (size_t i = 0; i < probes.size(); ++i)
      if (!probes[i].screened_out && !probes[i].from_rate) {
        const double seconds = estimate(i, timed(probes[i].scheme, sample.size()), sample.size());
        probes[i].seconds = std::min(round ? probes[i].seconds : 1e300, seconds);
      }
  return probes;
}

// Choices measured earlier in this process, by machine, input size, threads, chunks, SIMD
// option, matches and the sample's hash.
using ChoiceKey =
    std::tuple<const void*, uint32_t, size_t, int, size_t, std::string, bool, uint64_t>;

inline ChoiceKey choice_key(const Tables& t, size_t n, const ProbeRun& run, uint64_t hash) {
  return ChoiceKey{t.table, t.start, n, run.threads, run.chunks, run.simd, run.matches, hash};
}
struct RememberedChoices {
  std::mutex guard;
  std::map<ChoiceKey, std::pair<std::string, std::string>> choices;  // scheme, reason
};
inline RememberedChoices& remembered_choices() {
  static RememberedChoices memory;
  return memory;
}

// Which input a choice was made on, cheaply: FNV-1a over kKeyWindowBytes at each of the
// probe sample's kProbeWindows positions, read in place (before: a copy of the whole
// 32 KiB sample, hashed, on every run of `auto` over 16 MiB or more).
constexpr size_t kKeyWindowBytes = 1024;

inline uint64_t choice_hash(const uint8_t* data, size_t n) {
  const size_t window =
      std::clamp(n / kProbeShare / kProbeWindows, kProbeMinWindow, kProbeMaxWindow);
  std::vector<uint8_t> key;
  key.reserve(kProbeWindows * kKeyWindowBytes);
  for (size_t w = 0; w < kProbeWindows; ++w) {
    const size_t begin = (n - std::min(n, window)) * w / (kProbeWindows - 1);
    key.insert(key.end(), data + begin, data + begin + std::min(kKeyWindowBytes, n - begin));
  }
  return sample_hash(key);
}

inline bool remembers(size_t n, const ProbeRun& run) {
  return n >= probe_min_input() && run.chunks >= 2 && n >= kProbeWindows;
}

// The scheme chosen by an earlier run over an input of the same size and sample key, if
// any: then neither the rules nor the probes run again.
inline bool remembered_choice(const Tables& t, const uint8_t* data, size_t n, const ProbeRun& run,
                              std::string& scheme, std::string& reason) {
  if (!remembers(n, run)) return false;
  const ChoiceKey key = choice_key(t, n, run, choice_hash(data, n));
  RememberedChoices& memory = remembered_choices();
  const std::lock_guard<std::mutex> lock(memory.guard);
  const auto found = memory.choices.find(key);
  if (found == memory.choices.end()) return false;
  scheme = found->second.first;
  reason = "as measured by an earlier run in this process over the same sample of an input "
           "of this size (" + found->second.second + ")";
  return true;
}

// Keeps a choice for later runs in this process (remembered_choice): the probes' and the
// choices that the timed kernels or the lookback rule made without probes.
inline void remember_choice(const Tables& t, const uint8_t* data, size_t n, const ProbeRun& run,
                            const std::string& scheme, const std::string& reason) {
  if (!remembers(n, run)) return;
  const ChoiceKey key = choice_key(t, n, run, choice_hash(data, n));
  RememberedChoices& memory = remembered_choices();
  const std::lock_guard<std::mutex> lock(memory.guard);
  if (memory.choices.size() >= kRememberedChoices) memory.choices.clear();
  memory.choices[key] = {scheme, reason};
}

// The scheme `auto` runs: the fastest probe, or the rules' pick where the input is too
// small to probe or the pick is within kKeepRuleMargin of the fastest. `reason` holds
// the rules' reason on entry and the whole explanation on return.
template <class Entry>
std::string measured_choice(const Tables& t, const uint8_t* data, size_t n, const ProbeRun& run,
                            const std::string& ruled, bool speculation_hopeless,
                            double simd_rate, std::string& reason) {
  const int threads = run.threads;
  const size_t chunks = run.chunks;
  if (n < probe_min_input() || chunks < 2 || n < kProbeWindows) {
    reason = "by the analysis rules (the input is under " + std::to_string(probe_min_input()) +
             " bytes, too small to probe cheaply): " + reason;
    return ruled;
  }
  const std::vector<uint8_t> bytes = probe_sample(data, n);
  const std::vector<SchemeProbe> probes =
      probe_schemes<Entry>(t, bytes, n, run, ruled, speculation_hopeless, simd_rate);
  const size_t sample = bytes.size();
  const SchemeProbe* best = &probes[0];
  const SchemeProbe* rule = nullptr;  // not probed: too costly to enumerate
  for (const SchemeProbe& probe : probes) {
    if (probe.seconds < best->seconds) best = &probe;
    if (probe.scheme == ruled) rule = &probe;
  }
  const SchemeProbe* pick =
      rule && best->seconds >= kKeepRuleMargin * rule->seconds ? rule : best;
  std::ostringstream why;
  why.setf(std::ios::fixed);
  why.precision(2);
  why << "measured: every scheme ran over the same " << (sample >> 10) << " KiB sample ("
      << kProbeWindows << " windows spread over the input, " << chunks
      << " chunks, one thread, projected to " << threads << " threads and to the whole input from "
      << "a fixed cost and a rate, fastest of " << kProbeRounds << "):";
  for (const SchemeProbe& probe : probes)
    why << " " << probe.scheme << " " << double(n) / probe.seconds / 1e9 << " GB/s"
        << (probe.from_rate ? " (from its timed rate, not probed)"
            : probe.screened_out ? " (first window only)" : "") << (&probe == &probes.back() ? ";" : ",");
  if (speculation_hopeless)
    why << " (spec and hspec not probed: most lookback guesses were wrong and none met the true"
        << " path within 1 KiB);";
  why << " picked " << pick->scheme
      << (pick == rule && pick != best ? " (the rules' pick, within 3% of the fastest)" : "")
      << "; the analysis rules would pick " << ruled << ": " << reason;
  reason = why.str();
  remember_choice(t, data, n, run, pick->scheme, reason);
  return pick->scheme;
}

}  // namespace v1
}  // namespace parafuse::fsm
