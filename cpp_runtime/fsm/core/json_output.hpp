// parafuse boostfsm runtime: the runner's output, JSON (docs/fsm-language.md section 8) or text.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace parafuse::fsm {
inline namespace v1 {

inline void append_json_string(std::string& out, const std::string& text) {
  out += '"';
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += char(c);
    }
  }
  out += '"';
}

// A JSON number that reads back as a float (`0.0`, not `0`), as Python's json.dumps
// prints the reference executor's.
inline std::string format_number(double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.9g", value);
  if (std::strpbrk(text, ".eEni") == nullptr) std::strcat(text, ".0");
  return text;
}

// The drivers' `, "counts": [...]` and, with `matches`, `, "matches": [[offset, tag], ...]`.
template <class MatchList>
void append_counts_and_matches(std::string& out, const std::vector<uint64_t>& counts,
                               const MatchList* matches) {
  out += ", \"counts\": [";
  for (size_t i = 0; i < counts.size(); ++i) out += (i ? ", " : "") + std::to_string(counts[i]);
  out += "]";
  if (!matches) return;
  out += ", \"matches\": [";
  for (size_t i = 0; i < matches->size(); ++i)
    out += (i ? ", [" : "[") + std::to_string((*matches)[i].offset) + ", " +
           std::to_string((*matches)[i].tag) + "]";
  out += "]";
}

// What a run printed: names resolved, timings measured.
struct RunReport {
  std::string machine;
  uint64_t bytes = 0;
  std::string final_state;  // JSON text: a quoted name or a number
  std::vector<std::string> tag_names;
  std::vector<uint64_t> counts;
  bool with_matches = false;
  std::vector<std::pair<uint64_t, uint32_t>> matches;
  std::string scheme, requested_scheme, reason;
  int threads = 1;
  double seconds = 0;
  int ranks = 0;  // under mpirun: the ranks (0: one process, no "ranks" key)
};

inline std::string report_json(const RunReport& r) {
  std::string out = "{\"machine\": ";
  append_json_string(out, r.machine);
  out += ", \"bytes\": " + std::to_string(r.bytes) + ", \"final_state\": " + r.final_state;
  out += ", \"counts\": {";
  for (size_t i = 0; i < r.tag_names.size(); ++i) {
    if (i) out += ", ";
    append_json_string(out, r.tag_names[i]);
    out += ": " + std::to_string(r.counts[i]);
  }
  out += "}";
  if (r.with_matches) {
    out += ", \"matches\": [";
    out.reserve(out.size() + r.matches.size() * 24);
    for (size_t i = 0; i < r.matches.size(); ++i) {
      if (i) out += ", ";
      out += "[" + std::to_string(r.matches[i].first) + ", ";
      append_json_string(out, r.tag_names[r.matches[i].second]);
      out += "]";
    }
    out += "]";
  }
  out += ", \"scheme\": ";
  append_json_string(out, r.scheme);
  out += ", \"requested_scheme\": ";
  append_json_string(out, r.requested_scheme);
  out += ", \"reason\": ";
  append_json_string(out, r.reason);
  out += ", \"threads\": " + std::to_string(r.threads);
  out += ", \"seconds\": " + format_number(r.seconds);
  out += ", \"gbps\": " + format_number(r.seconds > 0 ? double(r.bytes) / r.seconds / 1e9 : 0.0);
  if (r.ranks > 0) out += ", \"ranks\": " + std::to_string(r.ranks);
  out += "}\n";
  return out;
}

inline std::string report_text(const RunReport& r) {
  std::string state = r.final_state;
  if (!state.empty() && state[0] == '"') state = state.substr(1, state.size() - 2);
  char timing[96];
  std::snprintf(timing, sizeof timing, " (%.3f s, %s, %d thread%s)\n", r.seconds,
                r.scheme.c_str(), r.threads, r.threads == 1 ? "" : "s");
  std::string out = r.machine + ": " + std::to_string(r.bytes) + " bytes, final state " + state +
                    timing;
  for (size_t i = 0; i < r.tag_names.size(); ++i)
    out += "  " + r.tag_names[i] + ": " + std::to_string(r.counts[i]) + "\n";
  for (const auto& match : r.matches)
    out += std::to_string(match.first) + " " + r.tag_names[match.second] + "\n";
  return out;
}

inline void write_all(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

}  // namespace v1
}  // namespace parafuse::fsm
