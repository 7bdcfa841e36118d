// parafuse boostfsm runtime: what a token set's runner prints and writes
// (docs/fsm-language.md section 8): its extra flags, its JSON, and the .npy token file.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/atomic_file.hpp"
#include "fsm/core/json_output.hpp"
#include "fsm/core/runner_args.hpp"

namespace parafuse::fsm {
inline namespace v1 {

struct TokenArgs {
  bool tokens = false;
  std::string tokens_out;  // empty: no .npy
};

// Takes --tokens and --tokens-out FILE out of argv (the rest is parse_runner_args's).
inline TokenArgs take_token_args(int& argc, char** argv) {
  TokenArgs args;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--tokens") {
      args.tokens = true;
    } else if (arg == "--tokens-out") {
      if (i + 1 >= argc) throw UsageError("--tokens-out needs a value");
      args.tokens_out = argv[++i];
      if (args.tokens_out.empty()) throw UsageError("--tokens-out needs a file name");
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  return args;
}

inline const char* token_runner_usage() {
  static const std::string usage =
      std::string("INPUT [--threads T] [--scheme ") + kSchemeChoices +
      "] [--chunks C] [--json] [--repeat K] [--tokens] [--tokens-out FILE.npy]";
  return usage.c_str();
}

template <class TokenT>  // a struct {start, end, kind} of 24 bytes
struct TokenReport {
  std::string machine;
  uint64_t bytes = 0;
  std::vector<std::string> kind_names;
  std::vector<uint64_t> counts;
  bool with_tokens = false;
  const std::vector<TokenT>* tokens = nullptr;
  std::string scheme, requested_scheme, reason;
  int threads = 1;
  double seconds = 0;
  int ranks = 0;  // under mpirun: the ranks (0: one process, no "ranks" key)
};

template <class TokenT>
std::string token_report_json(const TokenReport<TokenT>& r) {
  std::string out = "{\"machine\": ";
  append_json_string(out, r.machine);
  // No state to name: each token restarts the tokenizer, and a run ends at `end`
  // (docs/fsm-language.md, token sets), so final_state is null, as for an engine
  // without numbered states.
  out += ", \"bytes\": " + std::to_string(r.bytes) + ", \"final_state\": null, \"end\": " +
         std::to_string(r.bytes);
  out += ", \"counts\": {";
  for (size_t i = 0; i < r.kind_names.size(); ++i) {
    if (i) out += ", ";
    append_json_string(out, r.kind_names[i]);
    out += ": " + std::to_string(r.counts[i]);
  }
  out += "}";
  if (r.with_tokens) {
    std::vector<std::string> quoted;
    for (const auto& name : r.kind_names) {
      quoted.emplace_back();
      append_json_string(quoted.back(), name);
    }
    out += ", \"tokens\": [";
    out.reserve(out.size() + r.tokens->size() * 28);
    bool first = true;
    for (const TokenT& token : *r.tokens) {
      out += first ? "[" : ", [";
      first = false;
      out += std::to_string(token.start) + ", " + std::to_string(token.end) + ", " +
             quoted[token.kind] + "]";
    }
    out += "]";
  }
  for (const auto& [key, value] : {std::pair<const char*, const std::string*>{"scheme", &r.scheme},
                                   {"requested_scheme", &r.requested_scheme},
                                   {"reason", &r.reason}}) {
    out += std::string(", \"") + key + "\": ";
    append_json_string(out, *value);
  }
  out += ", \"threads\": " + std::to_string(r.threads);
  out += ", \"seconds\": " + format_number(r.seconds);
  out += ", \"gbps\": " + format_number(r.seconds > 0 ? double(r.bytes) / r.seconds / 1e9 : 0.0);
  if (r.ranks > 0) out += ", \"ranks\": " + std::to_string(r.ranks);
  out += "}\n";
  return out;
}

template <class TokenT>
std::string token_report_text(const TokenReport<TokenT>& r) {
  char timing[96];
  std::snprintf(timing, sizeof timing, " (%.3f s, %s, %d thread%s)\n", r.seconds,
                r.scheme.c_str(), r.threads, r.threads == 1 ? "" : "s");
  std::string out = r.machine + ": " + std::to_string(r.bytes) + " bytes" + timing;
  for (size_t i = 0; i < r.kind_names.size(); ++i)
    out += "  " + r.kind_names[i] + ": " + std::to_string(r.counts[i]) + "\n";
  if (r.with_tokens)
    for (const TokenT& token : *r.tokens)
      out += std::to_string(token.start) + " " + std::to_string(token.end) + " " +
             r.kind_names[token.kind] + "\n";
  return out;
}

// The tokens as a .npy of records (start <u8, end <u8, kind <u2, 6 bytes padding), written
// whole or not at all (common/atomic_file.hpp): a failed run leaves no file.
template <class TokenT>
void write_tokens_npy(const std::string& path, const std::vector<TokenT>& tokens) {
  static_assert(sizeof(TokenT) == 24 && offsetof(TokenT, end) == 8 && offsetof(TokenT, kind) == 16,
                "a token is the 24-byte numpy record");
  std::string header = "{'descr': [('start', '<u8'), ('end', '<u8'), ('kind', '<u2'), "
                       "('', '|V6')], 'fortran_order': False, 'shape': (" +
                       std::to_string(tokens.size()) + ",), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  const char preamble[10] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0,
                             char(header.size() & 0xFF), char(header.size() >> 8)};
  common::write_file_atomically(
      path, {{preamble, sizeof preamble},
             {header.data(), header.size()},
             {reinterpret_cast<const char*>(tokens.data()), tokens.size() * sizeof(TokenT)}});
}

}  // namespace v1
}  // namespace parafuse::fsm
