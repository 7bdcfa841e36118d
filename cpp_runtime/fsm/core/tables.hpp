// parafuse boostfsm runtime: the tables of one machine, read from the blob that
// emitters/fsm/blob.py writes (layout documented there; slots in fsm/core/blob_slots.hpp). Views only: the blob
// stays where it is (embedded with .incbin, or loaded from a file by the driver).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "fsm/core/blob_slots.hpp"

namespace parafuse::fsm {
inline namespace v1 {

constexpr uint64_t kBlobMagic = 0x31424c424d534650ull;  // "PFSMBLB1"
constexpr uint32_t kFusedMissing = 0xFFFFFFFFu;
constexpr uint64_t kUnknown = ~0ull;
// A tag_list or end_list entry with this bit is reported one byte earlier (offset - 1):
// a match that needed to see the byte after it (`a\b`, or `$` before a final '\n').
constexpr uint32_t kDelayed = 1u << 31;

struct SimdKernels;  // fsm/simd/plan.hpp

struct Tables {
  // Offsets are in bytes: state s is at s << shift, a row of >= 8 entries of entry_bytes.
  uint32_t states = 0, classes = 0, shift = 0, entry_bytes = 1, fused_shift = 0;
  uint32_t start = 0;         // internal number of the start state
  uint32_t report_floor = 0;  // internal states >= this report
  uint32_t tag_count = 0;
  uint32_t fused_count = 0, fused_start = 0, fused_floor = 0, fused_bound = 0;
  bool fused_complete = false;
  uint32_t lookback = 64;
  uint64_t train_accuracy_ppm = kUnknown, converge2_p90 = kUnknown, converge4_median = kUnknown;
  const uint8_t* byte_class = nullptr;  // [256]
  const void* table = nullptr;          // [states << shift] bytes
  const uint32_t* external = nullptr;   // [states] internal -> state number of the machine
  const uint32_t* tag_begin = nullptr;  // [states + 1]
  const uint32_t* tag_list = nullptr;   // tag | kDelayed
  const uint32_t* end_begin = nullptr;  // [states + 1]: reports when the input ends in a state
  const uint32_t* end_list = nullptr;   // tag | kDelayed (offset n - 1)
  const uint32_t* fused_next = nullptr;     // [fused_count << fused_shift] bytes: offsets or kFusedMissing
  const uint32_t* fused_vectors = nullptr;  // [fused_count * states] internal states
  // The SIMD kernels compiled for these tables (fsm/simd/plan.hpp; not in the blob: whoever
  // parses it sets them); without them `enum` runs the scalar enumeration.
  const SimdKernels* simd_kernels = nullptr;

  uint32_t report_floor_offset() const { return report_floor << shift; }
  uint32_t fused_floor_offset() const { return fused_floor << fused_shift; }
  uint32_t reporting_states() const { return states - report_floor; }
  uint32_t reporting_fused() const { return fused_count - fused_floor; }
};

namespace detail {
inline uint64_t slot_at(const uint8_t* blob, size_t index) {
  uint64_t value;
  std::memcpy(&value, blob + 8 * index, 8);
  return value;
}

inline uint64_t slot(const uint8_t* blob, BlobSlot which) { return slot_at(blob, size_t(which)); }

inline const void* section(const uint8_t* blob, size_t size, BlobSection which, size_t expected) {
  const size_t first = size_t(BlobSlot::sections) + 2 * size_t(which);
  const uint64_t offset = slot_at(blob, first), length = slot_at(blob, first + 1);
  if (offset > size || length > size - offset || length != expected || offset % 64 != 0)
    throw std::runtime_error("machine tables: section " + std::to_string(size_t(which)) +
                             " is corrupt");
  return blob + offset;
}
}  // namespace detail

// Parse a blob (64-byte aligned); throws std::runtime_error when it is not one.
inline Tables parse_tables(const uint8_t* blob, size_t size) {
  using detail::slot;
  if (size < 8 * kHeaderSlots || reinterpret_cast<uintptr_t>(blob) % 64 != 0 ||
      slot(blob, BlobSlot::magic) != kBlobMagic)
    throw std::runtime_error("machine tables: not a parafuse machine blob");
  Tables t;
  t.states = uint32_t(slot(blob, BlobSlot::states));
  t.classes = uint32_t(slot(blob, BlobSlot::classes));
  t.shift = uint32_t(slot(blob, BlobSlot::shift));
  t.entry_bytes = uint32_t(slot(blob, BlobSlot::entry_bytes));
  t.start = uint32_t(slot(blob, BlobSlot::start));
  t.report_floor = uint32_t(slot(blob, BlobSlot::report_floor));
  t.tag_count = uint32_t(slot(blob, BlobSlot::tag_count));
  t.fused_count = uint32_t(slot(blob, BlobSlot::fused_count));
  t.fused_start = uint32_t(slot(blob, BlobSlot::fused_start));
  t.fused_floor = uint32_t(slot(blob, BlobSlot::fused_floor));
  t.fused_complete = slot(blob, BlobSlot::fused_complete) != 0;
  t.fused_bound = uint32_t(slot(blob, BlobSlot::fused_bound));
  t.lookback = uint32_t(slot(blob, BlobSlot::lookback));
  t.train_accuracy_ppm = slot(blob, BlobSlot::train_accuracy_ppm);
  t.converge2_p90 = slot(blob, BlobSlot::converge2_p90);
  t.converge4_median = slot(blob, BlobSlot::converge4_median);
  const uint64_t tag_entries = slot(blob, BlobSlot::tag_entries);
  const uint64_t end_entries = slot(blob, BlobSlot::end_entries);
  t.fused_shift = uint32_t(slot(blob, BlobSlot::fused_shift));
  if (t.shift > 24 || t.fused_shift > 24)
    throw std::runtime_error("machine tables: inconsistent header");
  const size_t rows = size_t(t.states) << t.shift, fused_rows = size_t(t.fused_count) << t.fused_shift;
  const auto words = [&](BlobSection which, size_t expected) {
    return static_cast<const uint32_t*>(detail::section(blob, size, which, expected));
  };
  t.byte_class = static_cast<const uint8_t*>(
      detail::section(blob, size, BlobSection::byte_class, 256));
  t.table = detail::section(blob, size, BlobSection::table, rows);
  t.external = words(BlobSection::external, 4 * size_t(t.states));
  t.tag_begin = words(BlobSection::tag_begin, 4 * (size_t(t.states) + 1));
  t.tag_list = words(BlobSection::tag_list, 4 * tag_entries);
  t.end_begin = words(BlobSection::end_begin, 4 * (size_t(t.states) + 1));
  t.end_list = words(BlobSection::end_list, 4 * end_entries);
  t.fused_next = words(BlobSection::fused_next, fused_rows);
  t.fused_vectors = words(BlobSection::fused_vectors, 4 * size_t(t.fused_count) * t.states);
  if (t.states == 0 || t.start >= t.states || t.report_floor > t.states || t.fused_count == 0 ||
      t.fused_start >= t.fused_count || t.fused_floor > t.fused_count ||
      (size_t(t.entry_bytes) << 3) > (size_t(1) << t.shift) || t.fused_shift < 5 ||
      (t.entry_bytes != 1 && t.entry_bytes != 2 && t.entry_bytes != 4))
    throw std::runtime_error("machine tables: inconsistent header");
  return t;
}

}  // namespace v1
}  // namespace parafuse::fsm
