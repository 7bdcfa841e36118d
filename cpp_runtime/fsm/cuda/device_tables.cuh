// parafuse boostfsm on GPUs: a machine's tables (fsm/core/tables.hpp) copied to device
// memory, and the steps the kernels take on them. States are byte offsets of table rows
// (state << shift), as on the CPU; fused states likewise (f << fused_shift).
#pragma once

#include <cstdint>

#include "fsm/core/tables.hpp"
#include "fsm/cuda/device.cuh"

namespace parafuse::fsm::cuda {

// What a kernel reads, by value: sizes and device pointers.
struct DeviceTables {
  uint32_t states = 0, shift = 0, entry_bytes = 1, floor_offset = 0, start_offset = 0;
  uint32_t fused_shift = 0, fused_start_offset = 0;
  uint64_t table_bytes = 0, fused_bytes = 0;
  const uint8_t* byte_class = nullptr;
  const uint8_t* table = nullptr;
  const uint32_t* tag_begin = nullptr;  // [states + 1], internal states
  const uint32_t* tag_list = nullptr;
  const uint32_t* fused_next = nullptr;
  const uint32_t* fused_vectors = nullptr;  // [fused states * states], internal states
};

__device__ inline uint32_t step(const DeviceTables& t, uint32_t offset, uint8_t byte) {
  const uint8_t* cell = t.table + offset + size_t(t.byte_class[byte]) * t.entry_bytes;
  if (t.entry_bytes == 1) return *cell;
  if (t.entry_bytes == 2) return *reinterpret_cast<const uint16_t*>(cell);
  return *reinterpret_cast<const uint32_t*>(cell);
}

// The fused offset after `byte`, or kFusedMissing where the compiler did not store it.
__device__ inline uint32_t fused_step(const DeviceTables& t, uint32_t fused, uint8_t byte) {
  const uint8_t* cell = reinterpret_cast<const uint8_t*>(t.fused_next) + fused +
                        size_t(t.byte_class[byte]) * sizeof(uint32_t);
  return *reinterpret_cast<const uint32_t*>(cell);
}

// Every kernel keeps the byte classes, and the table it walks where it fits, in shared
// memory: a warp's 32 lookups of a step then take one access of a bank each instead of 32
// sectors of the L1 cache.
constexpr uint32_t kSharedTableBytes = 24 << 10;

struct SharedTables {
  uint8_t byte_class[256];
  alignas(16) uint8_t table[kSharedTableBytes];
};

// `t` with its byte classes and its walked table (`fused`: the fused one) read from
// `shared`, copied there by the block's threads; every thread of the block calls it.
__device__ inline DeviceTables in_shared(const DeviceTables& t, bool fused, SharedTables& shared) {
  DeviceTables s = t;
  for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x) shared.byte_class[i] = t.byte_class[i];
  s.byte_class = shared.byte_class;
  const uint64_t bytes = fused ? t.fused_bytes : t.table_bytes;  // whole rows of >= 8 bytes
  if (bytes <= kSharedTableBytes) {
    const auto* from = fused ? reinterpret_cast<const uint32_t*>(t.fused_next)
                             : reinterpret_cast<const uint32_t*>(t.table);
    auto* to = reinterpret_cast<uint32_t*>(shared.table);
    for (uint64_t i = threadIdx.x; i < bytes / 4; i += blockDim.x) to[i] = from[i];
    if (fused) s.fused_next = reinterpret_cast<const uint32_t*>(shared.table);
    else s.table = shared.table;
  }
  __syncthreads();
  return s;
}

// The tables in device memory for as long as the object lives.
class UploadedTables {
 public:
  UploadedTables(const Tables& t, cudaStream_t stream)
      : byte_class_(256), table_(size_t(t.states) << t.shift),
        tag_begin_(size_t(t.states) + 1), tag_list_(t.tag_begin[t.states] + 1),
        fused_next_((size_t(t.fused_count) << t.fused_shift) / sizeof(uint32_t)),
        fused_vectors_(size_t(t.fused_count) * t.states) {
    byte_class_.upload(t.byte_class, 256, stream);
    table_.upload(static_cast<const uint8_t*>(t.table), size_t(t.states) << t.shift, stream);
    tag_begin_.upload(t.tag_begin, size_t(t.states) + 1, stream);
    tag_list_.upload(t.tag_list, t.tag_begin[t.states], stream);
    fused_next_.upload(t.fused_next, (size_t(t.fused_count) << t.fused_shift) / sizeof(uint32_t),
                       stream);
    fused_vectors_.upload(t.fused_vectors, size_t(t.fused_count) * t.states, stream);
    view_ = DeviceTables{t.states, t.shift, t.entry_bytes, t.report_floor_offset(),
                         t.start << t.shift, t.fused_shift, t.fused_start << t.fused_shift,
                         uint64_t(t.states) << t.shift, uint64_t(t.fused_count) << t.fused_shift,
                         byte_class_.get(), table_.get(), tag_begin_.get(), tag_list_.get(),
                         fused_next_.get(), fused_vectors_.get()};
  }
  const DeviceTables& view() const { return view_; }

 private:
  DeviceArray<uint8_t> byte_class_, table_;
  DeviceArray<uint32_t> tag_begin_, tag_list_, fused_next_, fused_vectors_;
  DeviceTables view_;
};

}  // namespace parafuse::fsm::cuda
