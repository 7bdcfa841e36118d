// boostfsm SIMD enumeration's kernels alone (bench/fsm_simd_kernel.py builds and runs this):
// simd_summarize over 4 chunks of one input, as one thread of `enum` runs them, timed by
// thread CPU time and wall clock, for a plan read from a file.
//
//   fsm_simd_kernel PLAN INPUT PATH RUNS BYTES
//
// PLAN: "states groups lo[0] .. lo[groups-1]" then 256 x states plan states (row b, lane
// p: the plan state after byte b from plan state p). PATH: ssse3, avx2, avx512vl,
// avx512vbmi or scalar. Prints the medians of RUNS runs over the first BYTES bytes of INPUT
// ("cpu GB/s wall GB/s") and a checksum of the end states and counts.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#if __has_include("fsm/simd/kernels.hpp")
#include "fsm/simd/kernels.hpp"
#else  // --against a revision whose runtime is one flat folder
#include "fsm/simd_kernels.hpp"
#endif

using namespace parafuse::fsm;

static double seconds(clockid_t clock) {
  timespec now;
  clock_gettime(clock, &now);
  return double(now.tv_sec) + 1e-9 * double(now.tv_nsec);
}

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s PLAN INPUT PATH RUNS BYTES\n", argv[0]);
    return 1;
  }
  std::ifstream in(argv[1]);
  SimdPlan plan;
  plan.kernels = simd_kernels_of<0, -1>();
  in >> plan.states >> plan.groups;
  for (uint32_t g = 0; g < plan.groups; ++g) in >> plan.lo[g];
  plan.lo[plan.groups] = plan.states;
  plan.storage.assign(256 * kSimdRowBytes + 64, 0);
  uint8_t* next = plan.storage.data() + (64 - reinterpret_cast<uintptr_t>(plan.storage.data()) % 64);
  for (uint32_t b = 0; b < 256; ++b)
    for (uint32_t p = 0; p < plan.states; ++p) {
      unsigned state = 0;
      in >> state;
      next[b * kSimdRowBytes + p] = uint8_t(state);
    }
  plan.next = next;
  const std::string path = argv[3];
  for (int each = 1; each < 16; ++each)  // by name: older runtimes lack some paths
    if (path == simd_path_name(SimdPath(each))) plan.path = SimdPath(each);
  if (plan.path == SimdPath::none || !cpu_supports(plan.path)) {
    std::fprintf(stderr, "path %s: unknown or not on this CPU\n", argv[3]);
    return 1;
  }
#if __has_include("fsm/simd/byte_pairs.hpp") || __has_include("fsm/simd_byte_pairs.hpp")
  // (runtimes without byte pairs step one byte at a time)
  if (plan.path == SimdPath::avx2 && plan.states <= 16)  // as make_simd_plan decides
    plan.byte_pairs = make_simd_byte_pairs(next, kSimdRowBytes, plan.states, plan.lo[0],
                                           plan.groups, simd_stride_request(), &plan.one_byte_why);
#endif
  // The input mapped, as the runners map it (page-aligned: chunk offsets as in a run).
  const int fd = open(argv[2], O_RDONLY);
  struct stat info {};
  if (fd < 0 || fstat(fd, &info) != 0 || info.st_size == 0) {
    std::fprintf(stderr, "cannot read %s\n", argv[2]);
    return 1;
  }
  const auto* input = static_cast<const uint8_t*>(
      mmap(nullptr, size_t(info.st_size), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0));
  const size_t bytes = std::min<size_t>(size_t(info.st_size), std::stoull(argv[5]));
  const int runs = std::max(1, std::atoi(argv[4]));
  constexpr int kChunks = 4;
  std::vector<double> cpu, wall;
  uint64_t check = 0;
  for (int run = 0; run < runs; ++run) {
    std::vector<SimdLane> lanes(kChunks);
    std::vector<uint64_t> ge(size_t(kChunks) * plan.groups * kSimdLanes, 0);
    for (int c = 0; c < kChunks; ++c) {
      const size_t begin = bytes * c / kChunks, end = bytes * (c + 1) / kChunks;
      lanes[c].data = input + begin;
      lanes[c].length = end - begin;
      lanes[c].start_everywhere(plan.states);
      lanes[c].ge = ge.data() + size_t(c) * plan.groups * kSimdLanes;
    }
    const double w = seconds(CLOCK_MONOTONIC), t = seconds(CLOCK_THREAD_CPUTIME_ID);
    simd_summarize(plan, lanes.data(), kChunks, int(plan.groups));
    cpu.push_back(seconds(CLOCK_THREAD_CPUTIME_ID) - t);
    wall.push_back(seconds(CLOCK_MONOTONIC) - w);
    check = 0;
    for (int c = 0; c < kChunks; ++c)
      for (uint32_t p = 0; p < plan.states; ++p) {
        check = check * 131 + lanes[c].state[p];
        for (uint32_t g = 0; g < plan.groups; ++g)
          check = check * 1000003 + ge[(size_t(c) * plan.groups + g) * kSimdLanes + p];
      }
  }
  std::sort(cpu.begin(), cpu.end());
  std::sort(wall.begin(), wall.end());
  std::printf("%.3f %.3f %016llx\n", double(bytes) / cpu[runs / 2] / 1e9,
              double(bytes) / wall[runs / 2] / 1e9, static_cast<unsigned long long>(check));
  return 0;
}
