// The runner's command line (docs/ccn-language.md section 10), checked against the program before any
// step: what the program has (ProgramInfo), what was asked (RunnerOptions), and the
// InputError that every rank reports for bad input (ccn/runner_report.hpp).
#pragma once
#include "ccn/namespace.hpp"
#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace parafuse::ccn {

struct ProgramInfo {
  std::string name;
  std::vector<std::string> size_names, param_names, required_params, schedules;
  std::string default_schedule;
  std::string backend = "cpu";  // the report's "backend"
  std::vector<std::pair<std::string, int>> groups;           // name, blocks
  std::vector<std::pair<int, int>> broadcast_roots;           // root, blocks of its group (1: world)
};

struct RunnerOptions {
  std::map<std::string, std::string> sizes, params;
  std::string schedule, inputs, outputs;
  uint64_t seed = 0;
  long iters = 1, warmup = 0;
  bool random = false, json = false;
};

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline std::string without_spaces_around(const std::string& text) {
  const char* spaces = " \t\n\r\f\v";
  const auto first = text.find_first_not_of(spaces);
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(spaces) - first + 1);
}

// NAME=VALUE, spaces around the name and the value dropped; a name given twice is an error.
inline void split_assignment(const std::string& option, const std::string& text,
                             std::map<std::string, std::string>& into) {
  const auto eq = text.find('=');
  const std::string name = without_spaces_around(text.substr(0, eq));
  if (eq == std::string::npos || name.empty()) {
    throw InputError(option + " " + text + ": expected NAME=VALUE");
  }
  const std::string value = without_spaces_around(text.substr(eq + 1));
  if (into.count(name)) {
    throw InputError(option + " " + name + " given twice (" + name + "=" + into[name] + " and " +
                     name + "=" + value + ")");
  }
  into[name] = value;
}

// `between` joins option and text in the message: "--iters x" but "--size N=x".
inline long parse_long(const std::string& option, const std::string& text,
                       const std::string& between = " ") {
  try {
    size_t used = 0;
    long value = std::stol(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  throw InputError(option + between + text + ": not an integer");
}

// -h or --help anywhere on the command line: the runner prints runner_usage and exits 0.
inline bool asks_for_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") return true;
  }
  return false;
}

inline std::string comma_list(const std::vector<std::string>& names) {
  std::string list;
  for (const auto& name : names) list += (list.empty() ? "" : ", ") + name;
  return list.empty() ? "none" : list;
}

// The options of docs/ccn-language.md section 10, with this program's names.
inline std::string runner_usage(const ProgramInfo& info) {
  std::string sizes;
  for (const auto& name : info.size_names) sizes += " --size " + name + "=...";
  std::string required;
  for (const auto& name : info.required_params) required += " --param " + name + "=...";
  return "usage: mpirun -np R " + info.name + "_run" + sizes + required +
         " (--inputs IN | --random)\n"
         "         [--schedule S] [--outputs OUT] [--param NAME=VALUE ...] [--seed S]\n"
         "         [--iters K] [--warmup W] [--json]\n"
         "  --size NAME=N       every size variable, at least 1: " +
         comma_list(info.size_names) + "\n"
         "  --schedule S        one of " + comma_list(info.schedules) + " (default: " +
         info.default_schedule + ")\n"
         "  --param NAME=VALUE  a param's value: " + comma_list(info.param_names) +
         (info.required_params.empty() ? "" : " (without a default: " +
                                                  comma_list(info.required_params) + ")") + "\n"
         "  --inputs IN         folder of input and initial-state files (IN/NAME.npy,\n"
         "                      IN/NAME.rankR.npy for local values)\n"
         "  --random            fill every input and initial state from the seed instead\n"
         "  --outputs OUT       folder for the results (nothing is written without it)\n"
         "  --seed S            seed of dropout and --random (default 0)\n"
         "  --iters K           timed steps, states carried from step to step (default 1)\n"
         "  --warmup W          untimed steps first, their effects undone (default 0)\n"
         "  --json              one JSON object instead of the summary line\n"
         "  -h, --help          this text\n";
}

inline RunnerOptions parse_options(int argc, char** argv) {
  RunnerOptions o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw InputError(arg + " needs a value");
      return argv[++i];
    };
    auto folder = [&]() -> std::string {  // an empty --inputs or --outputs is not "none"
      std::string path = value();
      if (without_spaces_around(path).empty()) throw InputError(arg + ": an empty path");
      return path;
    };
    if (arg == "--size") split_assignment(arg, value(), o.sizes);
    else if (arg == "--param") split_assignment(arg, value(), o.params);
    else if (arg == "--schedule") o.schedule = value();
    else if (arg == "--inputs") o.inputs = folder();
    else if (arg == "--outputs") o.outputs = folder();
    else if (arg == "--seed") o.seed = static_cast<uint64_t>(parse_long(arg, value()));
    else if (arg == "--iters") o.iters = parse_long(arg, value());
    else if (arg == "--warmup") o.warmup = parse_long(arg, value());
    else if (arg == "--random") o.random = true;
    else if (arg == "--json") o.json = true;
    else throw InputError("unknown option " + arg);
  }
  if (o.random && !o.inputs.empty()) {
    throw InputError("--inputs and --random: give one (--random fills every input)");
  }
  return o;
}

inline std::vector<int64_t> resolve_sizes(const ProgramInfo& info, const RunnerOptions& o) {
  for (const auto& [name, text] : o.sizes) {
    if (std::find(info.size_names.begin(), info.size_names.end(), name) == info.size_names.end()) {
      throw InputError("--size " + name + ": program '" + info.name + "' has no size variable '" +
                       name + "'");
    }
  }
  std::vector<int64_t> sizes;
  for (const auto& name : info.size_names) {
    auto it = o.sizes.find(name);
    if (it == o.sizes.end()) throw InputError("missing --size " + name + "=...");
    long value = parse_long("--size " + name, it->second, "=");
    if (value < 1) throw InputError("--size " + name + "=" + it->second + ": sizes must be at least 1");
    sizes.push_back(value);
  }
  return sizes;
}

inline void check_launch(const ProgramInfo& info, const RunnerOptions& o, int ranks) {
  if (o.iters < 1) throw InputError("--iters " + std::to_string(o.iters) + ": at least one step is needed");
  if (o.warmup < 0) throw InputError("--warmup must not be negative");
  if (std::find(info.schedules.begin(), info.schedules.end(), o.schedule) == info.schedules.end()) {
    std::string known;
    for (const auto& s : info.schedules) known += (known.empty() ? "" : ", ") + s;
    throw InputError("unknown --schedule " + o.schedule + " (this build has: " + known + ")");
  }
  for (const auto& [name, text] : o.params) {
    if (std::find(info.param_names.begin(), info.param_names.end(), name) == info.param_names.end()) {
      throw InputError("--param " + name + ": program '" + info.name + "' has no param '" + name + "'");
    }
  }
  for (const auto& name : info.required_params) {
    if (!o.params.count(name)) throw InputError("missing --param " + name + "=...: it has no default");
  }
  for (const auto& [name, blocks] : info.groups) {
    if (ranks % blocks) {
      throw InputError(std::to_string(ranks) + " ranks cannot be split into " +
                       std::to_string(blocks) + " equal blocks for group '" + name + "'");
    }
  }
  for (const auto& [root, blocks] : info.broadcast_roots) {
    if (root >= ranks / blocks) {
      throw InputError("broadcast root " + std::to_string(root) + " is not a rank of its block");
    }
  }
}

}  // namespace parafuse::ccn
