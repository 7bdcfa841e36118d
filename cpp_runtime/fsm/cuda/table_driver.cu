// parafuse boostfsm on GPUs: the table-driven driver the tests use, as
// fsm/core/table_driver.cpp is on the CPU: it loads a machine blob (emitters/fsm/blob.py)
// at run time and runs it on the device under each configuration.
//
//   fsm_cuda_table_driver BLOB INPUT [--matches] [--profile] SCHEME:THREADS:CHUNKS ...
//
// One JSON line per configuration: scheme, reason, chunks, final_state (the machine's state
// number), counts (per tag), with --matches matches as [offset, tag index], and with
// --profile the phases ("copy in", "on the device": fsm/cuda/run.cuh). THREADS is read and
// ignored: one device thread walks each chunk.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fsm/core/blob_file.hpp"
#include "fsm/core/driver_config.hpp"
#include "fsm/core/input.hpp"
#include "fsm/core/json_output.hpp"
#include "fsm/core/phase_json.hpp"
#include "fsm/cuda/run.cuh"

namespace fsm = parafuse::fsm;

namespace {

std::string result_line(const fsm::RunResult& result, bool matches) {
  std::string out = "{\"scheme\": ";
  fsm::append_json_string(out, result.scheme);
  out += ", \"reason\": ";
  fsm::append_json_string(out, result.reason);
  out += ", \"chunks\": " + std::to_string(result.chunks);
  out += ", \"final_state\": " + std::to_string(result.final_state);
  fsm::append_counts_and_matches(out, result.counts, matches ? &result.matches : nullptr);
  if (!result.phases.empty()) out += fsm::phases_json(result.phases);
  return out + "}\n";
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 3)
      throw std::runtime_error("usage: fsm_cuda_table_driver BLOB INPUT [--matches] CONFIG...");
    const fsm::AlignedBlob blob = fsm::load_blob(argv[1]);
    const fsm::Tables tables = fsm::parse_tables(blob.bytes.get(), blob.size);
    const fsm::InputBytes input(argv[2]);
    bool matches = false, profile = false;
    for (int i = 3; i < argc; ++i) {
      if (std::string(argv[i]) == "--matches" || std::string(argv[i]) == "--profile") {
        (std::string(argv[i]) == "--matches" ? matches : profile) = true;
        continue;
      }
      fsm::RunOptions options = fsm::parse_driver_config(argv[i], matches);
      options.profile = profile;
      const fsm::RunResult result =
          fsm::cuda::run_machine_cuda(tables, input.data(), input.size(), options);
      fsm::write_all(result_line(result, matches));
    }
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "fsm_cuda_table_driver: error: %s\n", error.what());
    return 1;
  }
}
