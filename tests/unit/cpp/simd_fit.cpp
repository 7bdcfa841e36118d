// Which plans the SIMD kernels a library compiled run (cpp_runtime/fsm/simd/plan.hpp
// SimdKernels, simd_kernels_why_not): their class of state counts, and their group count
// or none (any for -1). Prints "ok", or each case that fails.
#include <cstdio>
#include <string>

#include "fsm/simd/plan.hpp"

using namespace parafuse::fsm;

int failures = 0;

void expect(bool holds, const char* what) {
  if (!holds) std::printf("failed: %s\n", what), ++failures;
}

bool runs(const SimdKernels& kernels, uint32_t states, uint32_t groups) {
  return simd_kernels_why_not(&kernels, states, groups).empty();
}

int main() {
  const SimdKernels small_one{nullptr, 16, 1}, middle_four{nullptr, 64, 4}, every{};
  expect(runs(small_one, 12, 1), "16 states, 1 group: a 12-state plan of 1 group");
  expect(runs(small_one, 1, 0), "16 states, 1 group: a plan that counts none");
  expect(!runs(small_one, 12, 2), "16 states, 1 group: not 2 groups");
  expect(!runs(small_one, 17, 1), "16 states, 1 group: not 17 states");
  expect(runs(middle_four, 17, 4) && runs(middle_four, 64, 0), "17 to 64 states, 4 groups");
  expect(!runs(middle_four, 16, 4) && !runs(middle_four, 65, 4), "17 to 64 states only");
  expect(runs(every, 1, 7) && runs(every, 256, 3), "every plan");
  expect(!simd_kernels_why_not(nullptr, 12, 1).empty(), "no kernels run nothing");
  const std::string why = simd_kernels_why_not(&small_one, 20, 4);
  expect(why == "the library's SIMD kernels were compiled for 1 to 16 states and 1 group of "
                "reporting states, not 20 and 4", why.c_str());
  if (failures == 0) std::printf("ok\n");
  return failures == 0 ? 0 : 1;
}
