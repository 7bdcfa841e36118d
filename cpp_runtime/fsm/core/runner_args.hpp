// parafuse boostfsm runtime: the runner's command line (docs/fsm-language.md section 8).
//
//   M_run INPUT [--threads T] [--scheme S] [--chunks C] [--matches] [--json] [--repeat K]
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "fsm/core/run_limits.hpp"

namespace parafuse::fsm {
inline namespace v1 {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct RunnerArgs {
  std::string input;
  int threads = 0;
  std::string scheme;
  size_t chunks = 0;
  bool matches = false, json = false;
  int repeat = 1;
};

inline uint64_t parse_count(const std::string& flag, const std::string& text, uint64_t low,
                            uint64_t high) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || *end != '\0' || errno != 0 || value < low || value > high)
    throw UsageError(flag + " needs a whole number from " + std::to_string(low) + " to " +
                     std::to_string(high) + ", not '" + text + "'");
  return value;
}

inline RunnerArgs parse_runner_args(int argc, char** argv, const std::string& default_scheme) {
  RunnerArgs args;
  args.scheme = default_scheme;
  bool have_input = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--threads") args.threads = int(parse_count(arg, value(), 0, kMostThreads));
    else if (arg == "--chunks") args.chunks = size_t(parse_count(arg, value(), 0, kMaxChunks));
    else if (arg == "--repeat") args.repeat = int(parse_count(arg, value(), 1, 1000000));
    else if (arg == "--scheme") args.scheme = value();
    else if (arg == "--matches") args.matches = true;
    else if (arg == "--json") args.json = true;
    else if (arg == "-h" || arg == "--help") throw UsageError("help");
    else if (arg.size() > 1 && arg[0] == '-') throw UsageError("unknown option '" + arg + "'");
    else if (have_input) throw UsageError("more than one INPUT ('" + args.input + "', '" + arg + "')");
    else args.input = arg, have_input = true;
  }
  if (!have_input) throw UsageError("missing INPUT (a file, or - for standard input)");
  return args;
}

inline const char* runner_usage() {
  static const std::string usage = std::string("INPUT [--threads T] [--scheme ") +
                                   kSchemeChoices +
                                   "] [--chunks C] [--matches] [--json] [--repeat K]";
  return usage.c_str();
}

}  // namespace v1
}  // namespace parafuse::fsm
