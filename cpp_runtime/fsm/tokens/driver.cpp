// parafuse boostfsm: the token-set driver the tests use. It loads token-set blobs
// (emitters/fsm/token_blob.py) at run time, so that property tests over many random token
// sets need one build.
//
//   fsm_token_driver MANIFEST SCHEME:THREADS:CHUNKS ...
//
// MANIFEST has one case a line: `BLOB INPUT`. Per case, one JSON line: the tokens of `seq`
// as [start, end, kind] and its counts, for every configuration whose tokens or counts
// differ from seq's, that configuration with its scheme and reason ("differs"), and what
// each `auto` configuration ran and why ("auto": [config, scheme, reason]).
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "fsm/core/json_output.hpp"
#include "fsm/tokens/schemes.hpp"

namespace fsm = parafuse::fsm;

namespace {

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot read '" + path + "'");
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

bool same(const std::vector<fsm::Token>& a, const std::vector<fsm::Token>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].start != b[i].start || a[i].end != b[i].end || a[i].kind != b[i].kind) return false;
  return true;
}

std::string counts_json(const std::vector<uint64_t>& counts) {
  std::string out = "[";
  for (size_t i = 0; i < counts.size(); ++i) out += (i ? ", " : "") + std::to_string(counts[i]);
  return out + "]";
}

void run_case(const std::string& blob_path, const std::string& input_path,
              const std::vector<std::string>& configs) {
  const std::vector<uint8_t> raw = read_all(blob_path);
  std::unique_ptr<uint64_t[]> aligned(new uint64_t[raw.size() / 8 + 1]);
  std::copy(raw.begin(), raw.end(), reinterpret_cast<uint8_t*>(aligned.get()));
  const fsm::TokenTables tables =
      fsm::parse_token_tables(reinterpret_cast<const uint8_t*>(aligned.get()), raw.size());
  const std::vector<uint8_t> data = read_all(input_path);
  fsm::TokenRunOptions seq_options;
  seq_options.scheme = fsm::scheme_name(fsm::Scheme::seq);
  std::vector<fsm::Token> expected;
  const fsm::TokenRunResult truth =
      fsm::run_token_set(tables, data.data(), data.size(), seq_options, &expected);
  std::string out = "{\"tokens\": [";
  for (size_t i = 0; i < expected.size(); ++i)
    out += (i ? ", [" : "[") + std::to_string(expected[i].start) + ", " +
           std::to_string(expected[i].end) + ", " + std::to_string(expected[i].kind) + "]";
  out += "], \"counts\": " + counts_json(truth.counts) + ", \"differs\": [";
  bool first = true;
  std::string autos;
  for (const std::string& config : configs) {
    const size_t a = config.find(':'), b = config.find(':', a + 1);
    fsm::TokenRunOptions options;
    options.scheme = config.substr(0, a);
    options.threads = std::stoi(config.substr(a + 1, b - a - 1));
    options.chunks = size_t(std::stoull(config.substr(b + 1)));
    std::vector<fsm::Token> got;
    const fsm::TokenRunResult result =
        fsm::run_token_set(tables, data.data(), data.size(), options, &got);
    const fsm::TokenRunResult counted =
        fsm::run_token_set<fsm::Token>(tables, data.data(), data.size(), options, nullptr);
    const fsm::Scheme asked = fsm::scheme_named(options.scheme);
    const bool scheme_ok = asked == fsm::Scheme::automatic || options.scheme == result.scheme ||
                           (asked == fsm::Scheme::fused &&
                            result.scheme == fsm::scheme_name(fsm::Scheme::enumeration));
    if (asked == fsm::Scheme::automatic) {
      autos += autos.empty() ? "[" : ", [";
      for (const std::string* text : {&config, &result.scheme, &result.reason}) {
        fsm::append_json_string(autos, *text);
        autos += text == &result.reason ? "]" : ", ";
      }
    }
    if (same(got, expected) && result.counts == truth.counts && counted.counts == truth.counts &&
        scheme_ok)
      continue;
    out += first ? "" : ", ";
    first = false;
    out += "{\"config\": ";
    fsm::append_json_string(out, config);
    out += ", \"scheme\": ";
    fsm::append_json_string(out, result.scheme);
    out += ", \"reason\": ";
    fsm::append_json_string(out, result.reason);
    out += ", \"tokens\": " + std::to_string(got.size()) + "}";
  }
  std::printf("%s], \"auto\": [%s]}\n", out.c_str(), autos.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: fsm_token_driver MANIFEST SCHEME:THREADS:CHUNKS ...\n");
    return 2;
  }
  try {
    const std::vector<std::string> configs(argv + 2, argv + argc);
    std::ifstream manifest(argv[1]);
    std::string blob, input;
    while (manifest >> blob >> input) run_case(blob, input, configs);
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "fsm_token_driver: error: %s\n", error.what());
    return 1;
  }
}
