// parafuse boostfsm on GPUs: the engine-set driver the tests use, as fsm/sets/driver.cpp is on
// the CPU: it loads an engine-set blob (emitters/fsm/engine_set_blob.py) at run time and
// runs it on the device under each configuration.
//
//   fsm_cuda_engine_set_driver BLOB TAGS INPUT [--matches] [--on-device] SCHEME:THREADS:CHUNKS ...
//
// One JSON line per configuration, as the CPU driver's (fsm/core/phase_json.hpp
// set_result_line). --on-device: the input is copied to device memory first and walked
// where it is. THREADS is read and ignored.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "fsm/core/blob_file.hpp"
#include "fsm/core/driver_config.hpp"
#include "fsm/core/input.hpp"
#include "fsm/core/phase_json.hpp"
#include "fsm/cuda/engine_set_run.cuh"

namespace fsm = parafuse::fsm;

int main(int argc, char** argv) {
  try {
    if (argc < 4)
      throw std::runtime_error("usage: fsm_cuda_engine_set_driver BLOB TAGS INPUT [--matches] "
                               "[--on-device] CONFIG...");
    const fsm::AlignedBlob blob = fsm::load_blob(argv[1]);
    const auto engines = fsm::parse_set_engines(blob.bytes.get(), blob.size);
    const uint32_t tags = uint32_t(std::stoul(argv[2]));
    const fsm::InputBytes input(argv[3]);
    bool matches = false, on_device = false;
    std::vector<std::string> configs;
    for (int i = 4; i < argc; ++i) {
      const std::string text = argv[i];
      if (text == "--matches") matches = true;
      else if (text == "--on-device") on_device = true;
      else configs.push_back(text);
    }
    const uint8_t* data = input.data();
    fsm::cuda::DeviceArray<uint8_t> copy(on_device ? input.size() : 0);
    if (on_device) {
      PF_FSM_CUDA(cudaMemcpy(copy.get(), data, input.size(), cudaMemcpyHostToDevice));
      data = copy.get();
    }
    for (const std::string& config : configs) {
      const fsm::RunOptions options = fsm::parse_driver_config(config, matches);
      const auto began = std::chrono::steady_clock::now();
      const fsm::SetResult result =
          fsm::cuda::run_engine_set_cuda(engines, tags, data, input.size(), options, on_device);
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - began;
      fsm::write_all(fsm::set_result_line(result, matches, took.count()));
    }
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "fsm_cuda_engine_set_driver: error: %s\n", error.what());
    return 1;
  }
}
