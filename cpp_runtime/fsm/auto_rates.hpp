// parafuse boostfsm runtime: auto's first rule, decided by two short timed runs where they
// are decisive.
//
// SIMD enumeration of a machine that fits its lanes (fsm/simd_plan.hpp) costs the same per
// byte whatever the input: one shuffle per byte and a compare per counted group of
// reporting states, with one pass giving each chunk's counts from every start state. Every
// other scheme walks a table at least once per byte: spec and hspec kLanes interleaved
// chunks per thread, plus their predictions and re-runs; fused a fused table at least as
// wide; seq a single chunk. So where SIMD enumeration counting the machine's groups runs
// at least as fast per core as kLanes interleaved counting walks of the machine's table
// over the same bytes of this input, `enum` is the fastest scheme at any thread count
// (both split the input into kLanes chunks per thread), and nothing that depends on the
// input (lookback accuracy, convergence, probes of every scheme) needs measuring.
//
// Only the uncertain side is measured on this machine and CPU: the walk's rate depends on
// the table's size and the cache; SIMD enumeration's on the kernel and the CPU's clock.
// Both run kRateRounds times, alternately, over one window at the input's middle (the
// fastest run of each is kept: a busy core delays a run, never speeds it up). The window
// is at most 1/kRateShare of the input per run, within [kRateMinBytes, kRateMaxBytes], so
// the rule costs well under 1% of a large input's work.
//
// Where walks are faster, the rates still serve: the probes (fsm/auto_probe.hpp) take
// SIMD enumeration's time from its rate instead of probing it, and where the rules leave
// only `seq` (speculation fails, paths do not meet, the fused DFA exceeds its bound),
// `enum` runs if its rate times the threads beats one walk's (timed too), without probes;
// where speculation from lookback is right almost always, `spec` costs about the timed
// walks, so it runs without probes too.
//
// Not for runs that list matches (SIMD enumeration walks again for them) nor for plans
// that cannot count their groups in the one pass (more than kSimdMaxGroups groups outside
// the paired AVX2 kernel): those recount from the true starts, a table walk of their own.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "fsm/schemes.hpp"

namespace parafuse::fsm {
inline namespace v1 {

constexpr size_t kRateShare = 256;
constexpr size_t kRateMinBytes = size_t(2) << 10, kRateMaxBytes = size_t(16) << 10;
constexpr int kRateRounds = 3;
constexpr double kRateClockFloor = 1e-7;  // seconds: below the clock's resolution

// Whether SIMD enumeration counts this run in one pass (see above).
template <class Entry>
bool Engine<Entry>::simd_counts_in_one_pass(const SimdPlan& plan, size_t chunks) const {
  return !wants_matches_ && plan.path != SimdPath::none && plan.counts() &&
         chunks * plan.groups * kSimdLanes <= kSimdCountEntries;
}

// The window the kernels are timed over: its length; it starts at data_ + (n_ - length) / 2.
template <class Entry>
size_t Engine<Entry>::rate_window() const {
  return std::clamp(n_ / kRateShare, std::min(n_, kRateMinBytes), kRateMaxBytes);
}

// SIMD enumeration's rate and kLanes interleaved counting walks', in bytes per second of
// one core over the same window (see above); `single` stays 0 (single_walk_rate).
template <class Entry>
KernelRates Engine<Entry>::kernel_rates(const SimdPlan& plan) {
  const size_t bytes = rate_window();
  const uint8_t* window = data_ + (n_ - bytes) / 2;
  const int groups = int(plan.groups);
  std::vector<uint64_t> ge(size_t(kLanes) * std::max(groups, 1) * kSimdLanes, 0);
  Engine<Entry> walker(t_, window, bytes, 1);  // its own totals: the run's stay untouched
  walker.split(kLanes);
  size_t ids[kLanes];
  for (int k = 0; k < kLanes; ++k) ids[k] = size_t(k);
  double simd_seconds = 1e300, walk_seconds = 1e300;
  for (int round = 0; round < kRateRounds; ++round) {
    SimdLane lanes[kLanes];
    for (int k = 0; k < kLanes; ++k) {
      const Chunk& chunk = walker.chunks_[size_t(k)];
      lanes[k].data = window + chunk.begin;
      lanes[k].length = chunk.length();
      lanes[k].start_everywhere(plan.states);
      lanes[k].ge = ge.data() + size_t(k) * std::max(groups, 1) * kSimdLanes;
    }
    double began = omp_get_wtime();
    simd_summarize(plan, lanes, kLanes, groups);
    simd_seconds = std::min(simd_seconds, omp_get_wtime() - began);
    for (Chunk& chunk : walker.chunks_) chunk.start = t_.start << t_.shift;
    began = omp_get_wtime();
    walker.walk_group(ids, kLanes, false);
    walk_seconds = std::min(walk_seconds, omp_get_wtime() - began);
  }
  return KernelRates{double(bytes) / std::max(simd_seconds, kRateClockFloor),
                     double(bytes) / std::max(walk_seconds, kRateClockFloor), 0.0};
}

// One counting walk's rate (seq's kernel) over the same window, timed only where the rules
// leave seq and enum (see above).
template <class Entry>
double Engine<Entry>::single_walk_rate() {
  const size_t bytes = rate_window();
  Engine<Entry> single(t_, data_ + (n_ - bytes) / 2, bytes, 1);
  single.split(1);
  const size_t only = 0;
  double seconds = 1e300;
  for (int round = 0; round < kRateRounds; ++round) {
    const double began = omp_get_wtime();
    single.walk_group(&only, 1, false);
    seconds = std::min(seconds, omp_get_wtime() - began);
  }
  return double(bytes) / std::max(seconds, kRateClockFloor);
}

}  // namespace v1
}  // namespace parafuse::fsm
