// parafuse boostfsm runtime: a blob file read into 64-byte aligned memory, as parse_tables
// wants it (the table-driven drivers load machines at run time).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace parafuse::fsm {
inline namespace v1 {

struct AlignedBlob {
  std::unique_ptr<uint8_t, decltype(&std::free)> bytes{nullptr, &std::free};
  size_t size = 0;
};

inline AlignedBlob load_blob(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot read blob '" + path + "'");
  std::vector<char> raw((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  AlignedBlob blob;
  blob.size = raw.size();
  blob.bytes.reset(static_cast<uint8_t*>(std::aligned_alloc(64, (raw.size() + 63) / 64 * 64 + 64)));
  std::copy(raw.begin(), raw.end(), blob.bytes.get());
  return blob;
}

}  // namespace v1
}  // namespace parafuse::fsm
