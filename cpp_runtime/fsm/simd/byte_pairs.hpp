// parafuse boostfsm runtime: the tables of SIMD enumeration two bytes per step
// (fsm/simd/kernels_stride2.hpp), for plans of up to 16 states on the AVX2 path that count
// at most one group of reporting states.
//
// The bytes with the same row of the plan's `next` form a class. Each pair of classes
// (c0, c1) has a row of 32 bytes: the plan state after both bytes from each of the 16
// lanes, then per lane how many of the two bytes left it at or above the group's first
// state (0, 1 or 2), so that one 256-bit shuffle by [lanes | lanes] gives the next states
// in its low half and the visits in its high half. `row_at` maps two input bytes, read as
// one little-endian 16-bit word, to their row's offset in 8-byte units: one lookup, added
// to `rows` in one addressing mode, replaces two class lookups.
//
// Why: the per-byte paired kernels make two loads per input byte (the byte and its row),
// and a Zen 3 core in a shared virtual machine was measured to sustain about two loads per
// cycle; two bytes per step make 1.1 loads per byte (a 64-bit word per 8 bytes, a row
// offset and a row per 2). Two or more groups (counters of two visits per step, kept in
// nibbles) ran slower than the per-byte nibble kernels and stay with them (docs/fsm.md).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace parafuse::fsm {
inline namespace v1 {

struct SimdBytePairs {
  uint32_t classes = 0;
  std::vector<uint16_t> row_at;   // [65536] the offset / 8 of the row of bytes b0 | b1 << 8
  std::vector<uint8_t> storage;   // rows, 32-byte aligned inside
  const uint8_t* rows = nullptr;  // [classes^2][32]
  size_t table_bytes() const { return size_t(classes) * classes * 32; }
};

// Auto takes two bytes per step where the rows fit this (in L1 and L2 beside `next`).
constexpr size_t kStride2TableBytes = size_t(64) << 10;
// The rows `row_at` reaches: offsets up to 65535 * 8 (128 byte classes).
constexpr size_t kStride2MostTableBytes = size_t(65536) * 8;

// What PARAFUSE_FSM_SIMD_STRIDE asks for: 0 (unset or auto: two bytes per step where the
// rows fit kStride2TableBytes), 1 (one byte per step) or 2 (two wherever `row_at` reaches
// the rows). Either way, plans counting two groups or more step one byte at a time.
inline int simd_stride_request() {
  const char* text = std::getenv("PARAFUSE_FSM_SIMD_STRIDE");
  const std::string value = text ? text : "";
  if (value.empty() || value == "auto") return 0;
  if (value == "1" || value == "2") return value[0] - '0';
  throw std::invalid_argument("PARAFUSE_FSM_SIMD_STRIDE='" + value + "': use 1, 2 or auto");
}

// The byte classes of a plan's `next` (rows of `row_bytes`, the first `lanes` of each).
inline std::vector<uint8_t> simd_byte_classes(const uint8_t* next, uint32_t row_bytes,
                                              uint32_t lanes, uint32_t* classes) {
  std::map<std::vector<uint8_t>, uint8_t> seen;
  std::vector<uint8_t> of(256);
  for (uint32_t b = 0; b < 256; ++b) {
    std::vector<uint8_t> row(next + b * row_bytes, next + b * row_bytes + lanes);
    of[b] = seen.emplace(std::move(row), uint8_t(seen.size())).first->second;
  }
  *classes = uint32_t(seen.size());
  return of;
}

// The tables of a plan of `states` <= 16 states counting `groups` groups, the first
// starting at plan state `lo`, or null where the plan steps one byte at a time: `stride`
// (simd_stride_request) 1, or else (then `why_not` says which) two groups or more, or rows
// past the bound.
inline std::shared_ptr<const SimdBytePairs> make_simd_byte_pairs(
    const uint8_t* next, uint32_t row_bytes, uint32_t states, uint32_t lo, uint32_t groups,
    int stride, std::string* why_not) {
  if (stride == 1 || states > 16) return nullptr;
  if (groups > 1) {
    *why_not = std::to_string(groups) + " groups of reporting states (the two-byte rows count one)";
    return nullptr;
  }
  auto pairs = std::make_shared<SimdBytePairs>();
  const std::vector<uint8_t> class_of = simd_byte_classes(next, row_bytes, 16, &pairs->classes);
  const size_t bound = stride == 0 ? kStride2TableBytes : kStride2MostTableBytes;
  if (pairs->table_bytes() > bound) {
    *why_not = std::to_string(pairs->classes) + " byte classes, whose two-byte rows would take " +
               std::to_string(pairs->table_bytes() >> 10) + " KiB (at most " +
               std::to_string(bound >> 10) + (stride == 0 ? " KiB unless forced)" : " KiB)");
    return nullptr;
  }
  const uint32_t classes = pairs->classes;
  std::vector<const uint8_t*> first(classes, nullptr);  // the row of each class
  for (uint32_t b = 0; b < 256; ++b)
    if (!first[class_of[b]]) first[class_of[b]] = next + b * row_bytes;
  pairs->storage.assign(pairs->table_bytes() + 32, 0);
  uint8_t* rows = pairs->storage.data() + (32 - reinterpret_cast<uintptr_t>(pairs->storage.data()) % 32);
  for (uint32_t c0 = 0; c0 < classes; ++c0)
    for (uint32_t c1 = 0; c1 < classes; ++c1) {
      uint8_t* row = rows + (size_t(c0) * classes + c1) * 32;
      for (uint32_t p = 0; p < states; ++p) {
        const uint8_t middle = first[c0][p], after = first[c1][middle];
        row[p] = after;
        if (groups == 1) row[16 + p] = uint8_t((middle >= lo) + (after >= lo));
      }
    }
  pairs->rows = rows;
  pairs->row_at.resize(65536);
  for (uint32_t word = 0; word < 65536; ++word)
    pairs->row_at[word] = uint16_t((class_of[word & 255] * classes + class_of[word >> 8]) * 4);
  return pairs;
}

}  // namespace v1
}  // namespace parafuse::fsm
