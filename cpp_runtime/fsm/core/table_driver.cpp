// parafuse boostfsm: the table-driven driver the tests use. It loads a machine blob
// (emitters/fsm/blob.py) at run time and runs it under many configurations, so
// property tests over many random machines need one build, not one per machine.
//
//   fsm_table_driver BLOB INPUT [--matches] [--profile] SCHEME[/SIMD]:THREADS:CHUNKS ...
//
// One JSON line per configuration: scheme, reason, final_state (the machine's state
// number), counts (per tag), with --matches matches as [offset, tag index] (after the
// first configuration that lists them, "as first" where they equal its: a test's runs print
// their lists once, not once per configuration), and with --profile the phases (name,
// parallel, seconds, seconds of each work unit).
//
// Built from units that compile in parallel, as a machine's library is: the SIMD kernels
// (driver_simd.cpp, driver_simd_vbmi.cpp, from the projects' templates), the schemes for
// 2- and 4-byte entries (table_driver_wide_entries.cpp), and this unit, with 1-byte ones.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fsm/auto/choice.hpp"
#include "fsm/core/blob_file.hpp"
#include "fsm/core/driver_config.hpp"
#include "fsm/core/input.hpp"
#include "fsm/core/json_output.hpp"
#include "fsm/core/phase_json.hpp"

namespace parafuse::fsm {
// The SIMD kernels the driver was built with (driver_simd.cpp: every plan's, or a test's).
const std::vector<const SimdKernels*>& driver_simd_kernels();
extern template RunResult run_typed<uint16_t>(const Tables&, const uint8_t*, size_t,
                                              const RunOptions&, int, size_t);
extern template RunResult run_typed<uint32_t>(const Tables&, const uint8_t*, size_t,
                                              const RunOptions&, int, size_t);
}  // namespace parafuse::fsm

namespace fsm = parafuse::fsm;

namespace {

bool same_matches(const std::vector<fsm::Match>& a, const std::vector<fsm::Match>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const fsm::Match& x, const fsm::Match& y) {
    return x.offset == y.offset && x.tag == y.tag;
  });
}

// `first`: the first configuration's matches (null for the first itself, or without --matches).
std::string result_line(const fsm::RunResult& result, bool matches,
                        const std::vector<fsm::Match>* first) {
  std::string out = "{\"scheme\": ";
  fsm::append_json_string(out, result.scheme);
  out += ", \"reason\": ";
  fsm::append_json_string(out, result.reason);
  out += ", \"threads\": " + std::to_string(result.threads);
  out += ", \"chunks\": " + std::to_string(result.chunks);
  out += ", \"entry_bytes\": " + std::to_string(result.entry_bytes) + ", \"counting\": [";
  const char* const modes[] = {"\"sparse\"", "\"packed\"", "\"dense\""};
  for (unsigned mode = 0, listed = 0; mode < 3; ++mode)
    if (result.counting_modes >> mode & 1u) out += std::string(listed++ ? ", " : "") + modes[mode];
  out += "]";
  out += ", \"final_state\": " + std::to_string(result.final_state);
  const bool as_first = matches && first && same_matches(result.matches, *first);
  fsm::append_counts_and_matches(out, result.counts,
                                 matches && !as_first ? &result.matches : nullptr);
  if (as_first) out += ", \"matches\": \"as first\"";
  if (!result.phases.empty()) out += fsm::phases_json(result.phases);
  return out + "}\n";
}

fsm::RunOptions parse_config(const std::string& text, bool matches, bool profile) {
  fsm::RunOptions options = fsm::parse_driver_config(text, matches);
  options.profile = profile;
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 3) throw std::runtime_error("usage: fsm_table_driver BLOB INPUT [--matches] CONFIG...");
    const fsm::AlignedBlob blob = fsm::load_blob(argv[1]);
    fsm::Tables tables = fsm::parse_tables(blob.bytes.get(), blob.size);
    tables.simd_kernels = fsm::simd_kernels_for(tables, fsm::driver_simd_kernels());
    const fsm::InputBytes input(argv[2]);
    bool matches = false, profile = false;
    std::vector<fsm::Match> first;
    bool have_first = false;
    for (int i = 3; i < argc; ++i) {
      if (std::string(argv[i]) == "--matches" || std::string(argv[i]) == "--profile") {
        (std::string(argv[i]) == "--matches" ? matches : profile) = true;
        continue;
      }
      const fsm::RunOptions options = parse_config(argv[i], matches, profile);
      const fsm::RunResult result = fsm::run_machine(tables, input.data(), input.size(), options);
      fsm::write_all(result_line(result, matches, have_first ? &first : nullptr));
      if (matches && !have_first) first = result.matches, have_first = true;
    }
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "fsm_table_driver: error: %s\n", error.what());
    return 1;
  }
}
