// parafuse boostfsm: the engine-set driver the tests use. It loads an engine-set blob
// (emitters/fsm/engine_set_blob.py) at run time and runs it under many configurations,
// so property tests over many random pattern sets need one build, not one per set.
//
//   fsm_engine_set_driver BLOB TAGS INPUT [--matches] [--profile] SCHEME:THREADS:CHUNKS ...
//
// One JSON line per configuration: scheme, reason, final_state (per engine, null for
// an engine without numbered states), counts (per tag), with --matches matches as
// [offset, tag index], with --profile every engine's phases (fsm/core/phase_json.hpp),
// and the run's wall time in seconds.
// The SIMD kernels are compiled in units of their own (driver_simd.cpp, driver_simd_vbmi.cpp,
// from the projects' templates, the same as the table driver's), in parallel with this one.
#define PARAFUSE_FSM_SIMD_ELSEWHERE 1
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "fsm/core/driver_config.hpp"
#include "fsm/core/input.hpp"
#include "fsm/core/json_output.hpp"
#include "fsm/core/phase_json.hpp"
#include "fsm/sets/engine_set.hpp"

namespace fsm = parafuse::fsm;

namespace parafuse::fsm {
// The SIMD kernels the driver was built with (driver_simd.cpp: every plan's).
const std::vector<const SimdKernels*>& driver_simd_kernels();
}  // namespace parafuse::fsm

namespace {

std::vector<uint8_t, std::allocator<uint8_t>> read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot read blob '" + path + "'");
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 4)
      throw std::runtime_error("usage: fsm_engine_set_driver BLOB TAGS INPUT [--matches] CONFIG...");
    const std::vector<uint8_t> raw = read_file(argv[1]);
    std::unique_ptr<uint8_t, decltype(&std::free)> blob(
        static_cast<uint8_t*>(std::aligned_alloc(64, (raw.size() + 63) / 64 * 64 + 64)), &std::free);
    std::copy(raw.begin(), raw.end(), blob.get());
    const auto engines = fsm::parse_engine_set(blob.get(), raw.size(), fsm::driver_simd_kernels());
    const uint32_t tags = uint32_t(std::stoul(argv[2]));
    const fsm::InputBytes input(argv[3]);
    bool matches = false, profile = false;
    for (int i = 4; i < argc; ++i) {
      const std::string text = argv[i];
      if (text == "--matches" || text == "--profile") {
        (text == "--matches" ? matches : profile) = true;
        continue;
      }
      fsm::RunOptions options = fsm::parse_driver_config(text, matches);
      options.profile = profile;
      const auto began = std::chrono::steady_clock::now();
      const fsm::SetResult result =
          fsm::run_engine_set(engines, tags, input.data(), input.size(), options);
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - began;
      fsm::write_all(fsm::set_result_line(result, matches, took.count()));
    }
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "fsm_engine_set_driver: error: %s\n", error.what());
    return 1;
  }
}
