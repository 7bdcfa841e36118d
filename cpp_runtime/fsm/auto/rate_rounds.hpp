// parafuse boostfsm runtime: how many rounds auto's first rule times its two kernels
// (fsm/auto/rates.hpp), as functions of their own (tests/unit/cpp/rate_rounds.cpp).
//
// Each round times SIMD enumeration and kLanes interleaved table walks over kLanes windows
// of its own; the windows of a round hold 1/kRateShare of the input, within
// [kRateMinBytes, kRateMaxBytes]. All rounds together time at most 1/kRateBudgetShare of
// the input's bytes (each kernel once per round), at least one round and at most
// kRateRounds: 4 from 2 MiB up, 1 under 1 MiB. Rounds stop early once the leader is
// decisive: after two rounds (at least), where each round's ratio of the two times lies
// beyond kRateDecisive on the same side (a busy core slows one run of a round; two rounds
// agreeing by 25% are not that).
#pragma once

#include <algorithm>
#include <cstddef>

namespace parafuse::fsm {
inline namespace v1 {

constexpr size_t kRateShare = 2048;
constexpr size_t kRateMinBytes = size_t(2) << 10, kRateMaxBytes = size_t(8) << 10;
constexpr int kRateRounds = 4;
constexpr double kRateDecisive = 1.25;
constexpr size_t kRateBudgetShare = 128;

// The bytes of each of the `lanes` windows of a round, for an input of n bytes.
constexpr size_t rate_window_bytes(size_t n, int lanes) {
  return std::clamp(n / kRateShare, std::min(n, kRateMinBytes), kRateMaxBytes) / size_t(lanes);
}

// The rounds the budget allows for an input of n bytes whose rounds hold `round_bytes`.
constexpr int rate_rounds_allowed(size_t n, size_t round_bytes) {
  return int(std::clamp<size_t>(n / kRateBudgetShare / (2 * round_bytes), 1, kRateRounds));
}

// Whether `rounds` rounds whose ratios of SIMD to walk time lie within [least, most]
// decide which kernel is faster (see above).
constexpr bool rate_rounds_decide(int rounds, double least, double most) {
  return rounds >= 2 && (most * kRateDecisive <= 1 || least >= kRateDecisive);
}

}  // namespace v1
}  // namespace parafuse::fsm
