// parafuse boostfsm runtime: auto's first rule, decided by two short timed runs where they
// are decisive.
//
// SIMD enumeration of a machine that fits its lanes (fsm/simd/plan.hpp) costs the same per
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
// Both run over the same kLanes windows (one per lane, as the run's chunks are), kRateRounds
// times, each round over windows of its own (kLanes x kRateRounds windows spread evenly over
// the input), alternately, which kernel first (the fastest run of each is kept: a busy core
// delays a run, never speeds it up). All windows of a round together are 1/kRateShare of
// the input, within [kRateMinBytes, kRateMaxBytes], so the rule costs under 1% of a large
// input's work (16 MiB: 8 KiB a round, about 40 us in all on the 2-core benchmark machine).
// Each round has bytes of its own because a counting walk branches on every report: timed
// again and again over the same bytes (one 16 KiB window, 3 times), the branch predictor
// learns their branches by the second round, and the fastest round runs 1.5x faster than
// the walks of a run ever do where reports are dense (C headers with a 14-state mode
// tracker: 2.5 GB/s timed, `spec` 1.6 over the whole input, where SIMD enumeration, which
// does not branch, runs 2.0 timed and 2.0 over the whole input), so `auto` would take
// `spec` where `enum` runs 1.17x faster. With bytes of its own each round, the walks time
// 1.7 GB/s there and `enum` is taken.
//
// Where walks are faster, the rates still serve: the probes (fsm/auto/probe.hpp) take
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

#include "fsm/auto/rate_rounds.hpp"
#include "fsm/core/schemes.hpp"

namespace parafuse::fsm {
inline namespace v1 {

constexpr double kRateClockFloor = 1e-7;  // seconds: below the clock's resolution
constexpr size_t kRateWarmBytes = 256;  // per window, untimed, before the first round
// How many rounds: fsm/auto/rate_rounds.hpp.

// Whether SIMD enumeration counts this run in one pass (see above).
template <class Entry>
bool Engine<Entry>::simd_counts_in_one_pass(const SimdPlan& plan, size_t chunks) const {
  return !wants_matches_ && plan.path != SimdPath::none && plan.counts() &&
         chunks * plan.groups * kSimdLanes <= kSimdCountEntries;
}

// The bytes of each of the kLanes windows the kernels are timed over (rate_windows).
template <class Entry>
size_t Engine<Entry>::rate_window() const {
  return rate_window_bytes(n_, kLanes);
}

// The kLanes windows of `window` bytes that round `round` times, as chunks (walked by an
// engine of their own over the input, each from the start state: the run's totals stay
// untouched): the kRateRounds x kLanes windows are spread evenly over the n bytes, and
// each round has bytes of its own (see above: a branch predictor learns repeated bytes).
inline std::vector<Chunk> rate_windows(size_t n, size_t window, int round) {
  constexpr size_t kSlots = size_t(kLanes) * kRateRounds;
  std::vector<Chunk> chunks(static_cast<size_t>(kLanes));
  for (int k = 0; k < kLanes; ++k) {
    const size_t slot = size_t(k) * kRateRounds + size_t(round);
    chunks[size_t(k)].begin = (n - window) * slot / (kSlots - 1);
    chunks[size_t(k)].end = chunks[size_t(k)].begin + window;
  }
  return chunks;
}

// SIMD enumeration's rate and kLanes interleaved counting walks', in bytes per second of
// one core over the same windows (see above); `single` stays 0 (single_walk_rate). Rounds
// alternate which kernel meets the windows first (the other finds them in the cache).
template <class Entry>
KernelRates Engine<Entry>::kernel_rates(const SimdPlan& plan) {
  const size_t window = rate_window(), bytes = window * kLanes;
  const int groups = int(plan.groups);
  std::vector<uint64_t> ge(size_t(kLanes) * std::max(groups, 1) * kSimdLanes, 0);
  Engine<Entry> walker(t_, data_, n_, 1);
  size_t ids[kLanes];
  for (int k = 0; k < kLanes; ++k) ids[k] = size_t(k);
  double simd_seconds = 1e300, walk_seconds = 1e300;
  const int budgeted = rate_rounds_allowed(n_, bytes);
  // Each kernel over `windows`, cut to `length` bytes each; seconds.
  const auto simd = [&](const std::vector<Chunk>& windows, size_t length) {
    SimdLane lanes[kLanes];
    for (int k = 0; k < kLanes; ++k) {
      lanes[k].data = data_ + windows[size_t(k)].begin;
      lanes[k].length = length;
      lanes[k].start_everywhere(plan.states);
      lanes[k].ge = ge.data() + size_t(k) * std::max(groups, 1) * kSimdLanes;
    }
    const double began = omp_get_wtime();
    simd_summarize(plan, lanes, kLanes, groups);
    return std::max(omp_get_wtime() - began, kRateClockFloor);
  };
  const auto walks = [&](const std::vector<Chunk>& windows, size_t length) {
    walker.chunks_ = windows;
    for (Chunk& chunk : walker.chunks_)
      chunk.start = t_.start << t_.shift, chunk.end = chunk.begin + length;
    const double began = omp_get_wtime();
    walker.walk_group(ids, kLanes, false);
    return std::max(omp_get_wtime() - began, kRateClockFloor);
  };
  // Untimed first: the kernels' tables, code and the walker's counters (allocated at their
  // first walk) would otherwise weigh on the first round alone (a single budgeted round
  // timed 90-state walks 3x slower than they run). Over bytes no round times (just past
  // the first round's windows, in the gaps between windows): a branch predictor that
  // learned timed bytes would make the walks look faster than they run.
  // The warm walk also settles the counting mode the timed ones count in from their first
  // byte: a run counts its first KiB per lane sparsely, then in the mode that block chose,
  // which over windows of 2 KiB per lane would weigh half; where reports are dense and
  // unpredictable, sparse counting mispredicts on most of them (a 160-state random DFA's
  // walks timed 0.46 GB/s where `spec` ran 1.7 over the whole input).
  std::vector<Chunk> warm = rate_windows(n_, window, 0);
  for (Chunk& w : warm) w.begin = std::min(w.end, n_ - std::min(n_, kRateWarmBytes));
  simd(warm, std::min<size_t>(window, kRateWarmBytes));
  Counting settled = Counting::sparse;
  walker.counting_settled_ = &settled;
  walks(warm, std::min<size_t>(window, kRateWarmBytes));
  walker.counting_settled_ = nullptr;
  walker.counting_from_ = rates_counting_ = settled;
  double least_ratio = 1e300, most_ratio = 0;  // simd / walk time, per round
  int round = 0;
  while (round < budgeted) {
    const std::vector<Chunk> windows = rate_windows(n_, window, round);
    // The round's bytes are read once before either kernel is timed, so that neither pays
    // their page faults and cache misses alone (which made the first kernel of each round
    // look as slow as the other, and no round decisive).
    uint8_t touched = 0;
    for (const Chunk& w : windows)
      for (size_t i = w.begin; i < w.end; i += 64) touched ^= data_[i];
    touch_sink_ ^= touched;
    double simd_round = 0, walk_round = 0;
    if (round % 2) walk_round = walks(windows, window), simd_round = simd(windows, window);
    else simd_round = simd(windows, window), walk_round = walks(windows, window);
    simd_seconds = std::min(simd_seconds, simd_round);
    walk_seconds = std::min(walk_seconds, walk_round);
    least_ratio = std::min(least_ratio, simd_round / walk_round);
    most_ratio = std::max(most_ratio, simd_round / walk_round);
    ++round;
    if (rate_rounds_decide(round, least_ratio, most_ratio)) break;
  }
  return KernelRates{double(bytes) / simd_seconds, double(bytes) / walk_seconds, 0.0, round};
}

// One counting walk's rate (seq's kernel) over the same windows one after another, timed
// only where the rules leave seq and enum (see above).
template <class Entry>
double Engine<Entry>::single_walk_rate() {
  const size_t window = rate_window();
  Engine<Entry> single(t_, data_, n_, 1);
  single.counting_from_ = rates_counting_;  // as kernel_rates' walks count
  double seconds = 1e300;
  for (int round = 0; round < std::max(1, rates_.rounds); ++round) {
    single.chunks_ = rate_windows(n_, window, round);
    const double began = omp_get_wtime();
    for (size_t k = 0; k < single.chunks_.size(); ++k) {
      single.chunks_[k].start = t_.start << t_.shift;
      single.walk_group(&k, 1, false);
    }
    seconds = std::min(seconds, omp_get_wtime() - began);
  }
  return double(window * kLanes) / std::max(seconds, kRateClockFloor);
}

}  // namespace v1
}  // namespace parafuse::fsm
