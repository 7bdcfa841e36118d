// Reading and writing .npy files (format version 1.0/2.0, little-endian, C order).
// Writes go to a temporary name in the same folder, are checked through the close and
// synced, and are renamed: a crash or a full disk never leaves a partial file.
#pragma once
#include "ccn/namespace.hpp"
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/atomic_file.hpp"

namespace parafuse::ccn {

struct NpyArray {
  std::string descr;            // e.g. "<f4", "<f2", "|V2"
  std::vector<int64_t> shape;
  std::vector<char> data;
};

inline std::string npy_field(const std::string& header, const std::string& key) {
  auto at = header.find("'" + key + "'");
  if (at == std::string::npos) throw std::runtime_error("no '" + key + "' in the header");
  auto colon = header.find(':', at);
  auto start = header.find_first_not_of(" ", colon + 1);
  if (header[start] == '\'') {
    auto end = header.find('\'', start + 1);
    return header.substr(start + 1, end - start - 1);
  }
  if (header[start] == '(') return header.substr(start, header.find(')', start) - start + 1);
  auto end = header.find_first_of(",}", start);
  return header.substr(start, end - start);
}

inline std::vector<int64_t> npy_shape(const std::string& tuple) {
  std::vector<int64_t> shape;
  std::string inner = tuple.substr(1, tuple.size() - 2);
  std::stringstream parts(inner);
  std::string item;
  while (std::getline(parts, item, ',')) {
    if (item.find_first_not_of(" ") == std::string::npos) continue;
    shape.push_back(std::stoll(item));
  }
  return shape;
}

// Read a whole .npy file; throws std::runtime_error with a reason on anything unexpected.
inline NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("missing file");
  char magic[8];
  if (!in.read(magic, 8) || std::string(magic, 6) != "\x93NUMPY") {
    throw std::runtime_error("not a .npy file");
  }
  uint32_t header_len = 0;
  if (magic[6] == 1) {
    unsigned char len[2];
    in.read(reinterpret_cast<char*>(len), 2);
    header_len = len[0] | (len[1] << 8);
  } else {
    unsigned char len[4];
    in.read(reinterpret_cast<char*>(len), 4);
    header_len = len[0] | (len[1] << 8) | (len[2] << 16) | (uint32_t(len[3]) << 24);
  }
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) throw std::runtime_error("truncated header");
  NpyArray array;
  array.descr = npy_field(header, "descr");
  if (npy_field(header, "fortran_order").find("True") != std::string::npos) {
    throw std::runtime_error("Fortran-ordered arrays are not supported");
  }
  array.shape = npy_shape(npy_field(header, "shape"));
  std::vector<char> rest((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  array.data = std::move(rest);
  return array;
}

using parafuse::common::write_file_atomically;

inline void write_npy(const std::string& path, const std::string& descr,
                      const std::vector<int64_t>& shape, const void* data, size_t bytes) {
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) {
    dims += std::to_string(shape[i]) + (shape.size() == 1 ? "," : (i + 1 < shape.size() ? ", " : ""));
  }
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims +
                       "), }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  const char magic[10] = {'\x93', 'N', 'U', 'M', 'P', 'Y', '\x01', '\x00',
                          static_cast<char>(header.size() & 0xff),
                          static_cast<char>(header.size() >> 8)};
  write_file_atomically(path, {{magic, sizeof magic},
                               {header.data(), header.size()},
                               {static_cast<const char*>(data), bytes}});
}

inline void write_text_atomically(const std::string& path, const std::string& text) {
  write_file_atomically(path, {{text.data(), text.size()}});
}

}  // namespace parafuse::ccn
