// auto's first rule times its kernels in rounds (cpp_runtime/fsm/auto/rate_rounds.hpp):
// how many the input's size allows, and when the rounds timed so far decide. Prints "ok",
// or each case that fails.
#include <cstdio>

#include "fsm/auto/rate_rounds.hpp"

using namespace parafuse::fsm;

int failures = 0;

void expect(bool holds, const char* what) {
  if (!holds) std::printf("failed: %s\n", what), ++failures;
}

int main() {
  // Rounds decide only where at least two agree, each beyond 1.25 on the same side.
  expect(!rate_rounds_decide(1, 0.1, 0.1), "one round, however decisive, does not decide");
  expect(rate_rounds_decide(2, 0.5, 0.6), "two rounds of SIMD 1.6x faster decide");
  expect(rate_rounds_decide(2, 1.3, 1.6), "two rounds of walks 1.3x faster decide");
  expect(!rate_rounds_decide(2, 0.5, 0.9), "a round of SIMD only 1.1x faster does not decide");
  expect(!rate_rounds_decide(3, 1.1, 1.6), "a round of walks only 1.1x faster does not decide");
  expect(!rate_rounds_decide(2, 0.5, 1.3), "rounds that disagree do not decide");
  expect(!rate_rounds_decide(4, 0.9, 1.1), "a tie does not decide");
  expect(rate_rounds_decide(4, 1.25, 2.0), "walks exactly 1.25x faster decide");
  // Each round's 4 windows hold 1/2048 of the input within [2 KiB, 8 KiB]; all rounds
  // together time at most 1/128 of it, one round at least and four at most.
  expect(rate_window_bytes(96 << 10, 4) == 512, "96 KiB: 4 windows of 512 bytes");
  expect(rate_window_bytes(100, 4) == 25, "100 bytes: 4 windows of 25 bytes");
  expect(rate_window_bytes(64 << 20, 4) == 2048, "64 MiB: 4 windows of 2 KiB");
  expect(rate_rounds_allowed(96 << 10, 2048) == 1, "96 KiB: one round");
  expect(rate_rounds_allowed(1 << 20, 2048) == 2, "1 MiB: two rounds");
  expect(rate_rounds_allowed(2 << 20, 2048) == 4, "2 MiB: four rounds");
  expect(rate_rounds_allowed(64 << 20, 8192) == 4, "64 MiB: four rounds, no more");
  if (failures == 0) std::printf("ok\n");
  return failures == 0 ? 0 : 1;
}
