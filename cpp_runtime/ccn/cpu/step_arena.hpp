// The buffers a CPU step needs only while it runs (an operand gathered for a GEMM, a
// transposed block, a row norm's work rows): the n-th request of a step gets the n-th
// slot, which keeps its memory from step to step, so that a step after the first
// allocates and faults in nothing (fresh memory costs its page faults, about 1 ms per
// 8 MB). The memory is not cleared.
#pragma once
#include "ccn/namespace.hpp"
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace parafuse::ccn {

class HostStepArena {
 public:
  void restart() { next_ = 0; }

  template <typename T> T* take(int64_t count) {
    if (next_ == slots_.size()) slots_.emplace_back();
    Slot& slot = slots_[next_++];
    const size_t bytes = sizeof(T) * static_cast<size_t>(count > 0 ? count : 0);
    if (slot.bytes < bytes) {
      slot.data.reset(static_cast<std::byte*>(::operator new(bytes, kAlignment)));
      slot.bytes = bytes;
    }
    return reinterpret_cast<T*>(slot.data.get());
  }

 private:
  static constexpr std::align_val_t kAlignment{64};
  struct Free {
    void operator()(std::byte* p) const { ::operator delete(p, kAlignment); }
  };
  struct Slot {
    std::unique_ptr<std::byte, Free> data;
    size_t bytes = 0;
  };
  std::vector<Slot> slots_;
  size_t next_ = 0;
};

}  // namespace parafuse::ccn
