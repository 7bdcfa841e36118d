// parafuse boostfsm on GPUs: the token-set driver the tests use, as fsm/tokens/driver.cpp is
// on the CPU: it loads token-set blobs (emitters/fsm/token_blob.py) at run time and
// tokenizes on the device under each configuration.
//
//   fsm_cuda_token_driver MANIFEST [--on-device] [--counts-only] [--reread-bytes B]
//                         SCHEME:THREADS:CHUNKS ...
//
// MANIFEST has one case a line: `BLOB INPUT`. Per case, one JSON line: {"runs": [...]}, one
// run per configuration: config, scheme, reason, tokens as [start, end, kind] and counts of
// a run that lists them (not with --counts-only), the counts of a run that lists no tokens
// ("counted") and its time ("seconds", until its counts are on the host). --on-device: the
// input is copied to device memory first and tokenized where it is; --reread-bytes: a
// thread's budget where rules may never close (fsm/cuda/token_run.cuh). THREADS is read and
// ignored.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "fsm/core/blob_file.hpp"
#include "fsm/core/input.hpp"
#include "fsm/core/json_output.hpp"
#include "fsm/cuda/token_run.cuh"

namespace fsm = parafuse::fsm;

namespace {

struct DriverFlags {
  bool on_device = false, counts_only = false;
  uint64_t reread_bytes = 0;
};

std::string counts_json(const std::vector<uint64_t>& counts) {
  std::string out = "[";
  for (size_t i = 0; i < counts.size(); ++i) out += (i ? ", " : "") + std::to_string(counts[i]);
  return out + "]";
}

std::string run_json(const std::string& config, const fsm::TokenTables& tables,
                     const uint8_t* data, size_t n, const DriverFlags& flags) {
  const size_t a = config.find(':'), b = config.find(':', a + 1);
  if (a == std::string::npos || b == std::string::npos)
    throw std::runtime_error("configuration '" + config + "' is not SCHEME:THREADS:CHUNKS");
  fsm::TokenRunOptions options;
  options.scheme = config.substr(0, a);
  options.chunks = size_t(std::stoull(config.substr(b + 1)));
  const auto began = std::chrono::steady_clock::now();
  const fsm::TokenRunResult counted = fsm::cuda::run_token_set_cuda<fsm::Token>(
      tables, data, n, options, nullptr, flags.on_device, flags.reread_bytes);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  std::string out = "{\"config\": ";
  fsm::append_json_string(out, config);
  out += ", \"scheme\": ";
  fsm::append_json_string(out, counted.scheme);
  out += ", \"reason\": ";
  fsm::append_json_string(out, counted.reason);
  out += ", \"counted\": " + counts_json(counted.counts);
  char seconds_text[32];
  std::snprintf(seconds_text, sizeof seconds_text, "%.9g", seconds);
  out += ", \"seconds\": " + std::string(seconds_text);
  if (flags.counts_only) return out + "}";
  std::vector<fsm::Token> tokens;
  const fsm::TokenRunResult listed = fsm::cuda::run_token_set_cuda(
      tables, data, n, options, &tokens, flags.on_device, flags.reread_bytes);
  out += ", \"listed_reason\": ";
  fsm::append_json_string(out, listed.reason);
  out += ", \"tokens\": [";
  for (size_t i = 0; i < tokens.size(); ++i)
    out += (i ? ", [" : "[") + std::to_string(tokens[i].start) + ", " +
           std::to_string(tokens[i].end) + ", " + std::to_string(tokens[i].kind) + "]";
  return out + "], \"counts\": " + counts_json(listed.counts) + "}";
}

void run_case(const std::string& blob_path, const std::string& input_path,
              const std::vector<std::string>& configs, const DriverFlags& flags) {
  const fsm::AlignedBlob blob = fsm::load_blob(blob_path);
  const fsm::TokenTables tables = fsm::parse_token_tables(blob.bytes.get(), blob.size);
  const fsm::InputBytes input(input_path);
  const uint8_t* data = input.data();
  fsm::cuda::DeviceArray<uint8_t> on_device(flags.on_device ? input.size() : 0);
  if (flags.on_device) {
    PF_FSM_CUDA(cudaMemcpy(on_device.get(), data, input.size(), cudaMemcpyHostToDevice));
    data = on_device.get();
  }
  std::string out = "{\"runs\": [";
  for (size_t i = 0; i < configs.size(); ++i)
    out += (i ? ", " : "") + run_json(configs[i], tables, data, input.size(), flags);
  fsm::write_all(out + "]}\n");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 2)
      throw std::runtime_error("usage: fsm_cuda_token_driver MANIFEST [--on-device] "
                               "[--counts-only] [--reread-bytes B] CONFIG...");
    DriverFlags flags;
    std::vector<std::string> configs;
    for (int i = 2; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--on-device") flags.on_device = true;
      else if (arg == "--counts-only") flags.counts_only = true;
      else if (arg == "--reread-bytes" && i + 1 < argc) flags.reread_bytes = std::stoull(argv[++i]);
      else configs.push_back(arg);
    }
    std::ifstream manifest(argv[1]);
    if (!manifest) throw std::runtime_error(std::string("cannot read '") + argv[1] + "'");
    std::string blob, input;
    while (manifest >> blob >> input) run_case(blob, input, configs, flags);
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "fsm_cuda_token_driver: error: %s\n", error.what());
    return 1;
  }
}
