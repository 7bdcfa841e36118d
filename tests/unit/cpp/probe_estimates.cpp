// auto's probes (cpp_runtime/fsm/auto/probe.hpp): what they estimate and how they run.
// - fitted_seconds keeps the per-byte rate fitted to two runs within [kLeastFitShare, 1] of
//   the larger run's own rate, and the fixed part at least its per-chunk phases;
// - probe_jobs pairs spec and hspec into one job, and probes_decided stops the rounds where
//   the leader is kDecisiveLead ahead or every finalist came from one run;
// - screen_probes keeps the rules' pick a finalist whatever its first window;
// - Engine::probe_speculation gives spec's and hspec's phases from one prediction and walk:
//   the same phases, re-validation rounds included, as each scheme's own run over the same
//   chunks (a permutation machine, whose guesses are wrong and whose paths never meet, so
//   that hspec needs a round per chunk), with and without matches.
// Prints "ok", or each case that fails.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "fsm/auto/choice.hpp"

using namespace parafuse::fsm;

int failures = 0;

void expect(bool holds, const std::string& what) {
  if (!holds) std::printf("failed: %s\n", what.c_str()), ++failures;
}

bool near(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::fabs(b); }

void fitted_rates_are_bounded() {
  const size_t small = 8192, large = 65536, n = size_t(32) << 20;
  const ProbeTime whole{1.0e-3, 0.1e-3, 0};
  const double scaled_rate = 0.9e-3 / double(large);
  {  // a consistent pair: the fitted rate, the fixed part what the larger run leaves
    const ProbeTime half{0.3e-3, 0.1e-3, 0};
    const double rate = 0.7e-3 / double(large - small);
    expect(near(fitted_seconds(half, small, whole, large, n),
                1.0e-3 - rate * double(large) + rate * double(n)), "consistent pair");
  }
  {  // the smaller run slowed: the rate no lower than kLeastFitShare of the scaled one
    const ProbeTime slowed{0.95e-3, 0.1e-3, 0};
    const double rate = kLeastFitShare * scaled_rate;
    expect(near(fitted_seconds(slowed, small, whole, large, n),
                1.0e-3 - rate * double(large) + rate * double(n)), "slowed smaller run");
  }
  {  // the smaller run fast: the rate no higher than the larger run's own, fixed >= per chunk
    const ProbeTime quick{0.05e-3, 0.0, 0};
    expect(near(fitted_seconds(quick, small, whole, large, n),
                0.1e-3 + scaled_rate * double(n)), "quick smaller run");
  }
}

void jobs_pair_speculation_and_rounds_stop() {
  std::vector<SchemeProbe> probes{{Scheme::seq, 1.0}, {Scheme::enumeration, 2.0},
                                  {Scheme::spec, 1.2}, {Scheme::hspec, 1.3}};
  const auto jobs = probe_jobs(probes, {0, 1, 2, 3});
  expect(jobs == std::vector<std::vector<size_t>>{{0}, {1}, {2, 3}}, "spec and hspec paired");
  expect(probe_jobs(probes, {0, 3}) == std::vector<std::vector<size_t>>{{0}, {3}},
         "hspec alone");
  expect(!probes_decided(probes, {0, 2}, probe_jobs(probes, {0, 2})), "1.2x is no lead");
  expect(probes_decided(probes, {0, 1}, probe_jobs(probes, {0, 1})), "2x is a lead");
  expect(probes_decided(probes, {2, 3}, probe_jobs(probes, {2, 3})), "one run's finalists");
  probes[1].from_rate = true;
  expect(probes_decided(probes, {1, 2, 3}, probe_jobs(probes, {2, 3})),
         "spec leads enum (from its rate) by 1.67x; hspec came from spec's run");
  probes[1].seconds = 1.5;
  expect(!probes_decided(probes, {1, 2, 3}, probe_jobs(probes, {2, 3})),
         "a finalist timed apart within the lead");
  probes[1].seconds = 1.1;
  expect(!probes_decided(probes, {1, 2, 3}, probe_jobs(probes, {2, 3})),
         "the rate-timed finalist is the best: another round may speed up the probed ones");
}

void screening_keeps_the_rules_pick() {
  std::vector<SchemeProbe> probes{{Scheme::seq, 1.0}, {Scheme::enumeration, 1.1},
                                  {Scheme::spec, 7.5}, {Scheme::hspec, 7.6}};
  screen_probes(probes, Scheme::hspec);
  expect(!probes[0].screened_out && !probes[1].screened_out, "the two fastest go on");
  expect(probes[2].screened_out, "7.5x the fastest, not the rules' pick: screened out");
  expect(!probes[3].screened_out, "the rules' pick goes on whatever its first window");
  screen_probes(probes, Scheme::seq);
  expect(probes[2].screened_out && probes[3].screened_out, "neither is the rules' pick now");
  probes[1].seconds = 2.5;
  screen_probes(probes, Scheme::seq);
  expect(probes[1].screened_out, "past kScreenRatio of the fastest, though second");
}

std::vector<std::string> names(const std::vector<PhaseTiming>& phases) {
  std::vector<std::string> out;
  for (const PhaseTiming& phase : phases) out.push_back(phase.name);
  return out;
}

void one_run_gives_both_validations() {
  constexpr uint32_t kStates = 12, kClasses = 3, kShift = 5;  // rows of 8 four-byte entries
  std::mt19937 rng(74);
  std::vector<uint32_t> table(size_t(kStates) << kShift >> 2, 0);
  for (uint32_t c = 0; c < kClasses; ++c) {  // each class permutes the states
    std::vector<uint32_t> to(kStates);
    for (uint32_t s = 0; s < kStates; ++s) to[s] = s;
    std::shuffle(to.begin(), to.end(), rng);
    for (uint32_t s = 0; s < kStates; ++s) table[(s << kShift >> 2) + c] = to[s] << kShift;
  }
  std::vector<uint8_t> byte_class(256);
  for (int b = 0; b < 256; ++b) byte_class[size_t(b)] = uint8_t(b % kClasses);
  std::vector<uint32_t> external(kStates), tag_begin(kStates + 1), end_begin(kStates + 1, 0);
  std::vector<uint32_t> tag_list;
  for (uint32_t s = 0; s < kStates; ++s) {
    external[s] = s;
    tag_begin[s] = uint32_t(tag_list.size());
    if (s >= 9) tag_list.push_back(0);  // states 9, 10, 11 report tag 0
  }
  tag_begin[kStates] = uint32_t(tag_list.size());
  Tables t;
  t.states = kStates, t.classes = kClasses, t.shift = kShift, t.entry_bytes = 4;
  t.report_floor = 9, t.tag_count = 1, t.lookback = 8;
  t.byte_class = byte_class.data(), t.table = table.data(), t.external = external.data();
  t.tag_begin = tag_begin.data(), t.tag_list = tag_list.data();
  t.end_begin = end_begin.data(), t.end_list = tag_list.data();
  std::vector<uint8_t> data(size_t(1) << 16);
  for (uint8_t& byte : data) byte = uint8_t(rng());
  for (const bool matches : {false, true}) {
    const auto own = [&](Scheme scheme) {
      Engine<uint32_t> engine(t, data.data(), data.size(), 1);
      engine.profile_ = true;
      engine.run_scheme(scheme, 8, matches);
      return names(engine.phases());
    };
    std::vector<PhaseTiming> spec, hspec;
    Engine<uint32_t> probe(t, data.data(), data.size(), 1);
    probe.profile_ = true;
    probe.probe_speculation(8, matches, spec, hspec);
    const std::string with = matches ? " with matches" : "";
    expect(names(spec) == own(Scheme::spec), "spec's phases" + with);
    expect(names(hspec) == own(Scheme::hspec), "hspec's phases" + with);
    size_t rounds = 0;
    for (const std::string& name : names(hspec)) rounds += name == "re-validate";
    expect(rounds >= 2, "hspec re-validated in rounds" + with);
    expect(spec[0].seconds == hspec[0].seconds && spec[1].seconds == hspec[1].seconds,
           "one prediction and walk" + with);
  }
}

int main() {
  fitted_rates_are_bounded();
  jobs_pair_speculation_and_rounds_stop();
  screening_keeps_the_rules_pick();
  one_run_gives_both_validations();
  if (failures == 0) std::printf("ok\n");
  return failures == 0 ? 0 : 1;
}
