// What every generated .ccn schedule implements, and what the runner, the library
// header and the Python module use: local blocks, named tensor slots, one step.
#pragma once
#include "ccn/namespace.hpp"
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "ccn/half.hpp"

namespace parafuse::ccn {

enum class DType { f16, bf16, f32, f64, i32, i64, b8 };

inline const char* dtype_name(DType t) {
  static const char* names[] = {"f16", "bf16", "f32", "f64", "i32", "i64", "bool"};
  return names[static_cast<int>(t)];
}
inline const char* npy_descr(DType t) {
  static const char* descrs[] = {"<f2", "|V2", "<f4", "<f8", "<i4", "<i8", "|b1"};
  return descrs[static_cast<int>(t)];
}
inline size_t dtype_size(DType t) {
  static const size_t sizes[] = {2, 2, 4, 8, 4, 8, 1};
  return sizes[static_cast<int>(t)];
}

// The block of a logical tensor that one rank holds (the split rule of docs/ccn-language.md section 1).
struct Local {
  std::vector<int64_t> logical, start, shape;
  int64_t count = 1;
};

inline Local local_block(const std::vector<int64_t>& logical, int sliced_dim, int parts,
                         int index) {
  Local local{logical, std::vector<int64_t>(logical.size(), 0), logical, 1};
  if (sliced_dim >= 0) {
    int64_t n = logical[sliced_dim], b = parts ? (n + parts - 1) / parts : n;
    int64_t start = std::min<int64_t>(index * b, n), stop = std::min<int64_t>(start + b, n);
    local.start[sliced_dim] = start;
    local.shape[sliced_dim] = stop - start;
  }
  for (int64_t extent : local.shape) local.count *= extent;
  return local;
}

inline size_t dims_of(const Local& local) { return local.shape.size(); }

// Product of the local extents from dim `from` on (the elements of one "row").
inline int64_t inner_count(const Local& local, size_t from) {
  int64_t count = 1;
  for (size_t d = from; d < local.shape.size(); ++d) count *= local.shape[d];
  return count;
}

// Product of the local extents before dim `until`.
inline int64_t outer_count(const Local& local, size_t until) {
  int64_t count = 1;
  for (size_t d = 0; d < until && d < local.shape.size(); ++d) count *= local.shape[d];
  return count;
}

// A named tensor of a step: an input or initial state to fill, or a result to write.
struct Slot {
  std::string name;   // file stem
  std::string value;  // the value it holds (the name bound to an update, for a state)
  DType dtype;
  std::string layout;  // as `coconetc show` prints it
  Local local;
  bool per_rank;  // `local` layout: one file per rank
  int ordinal;    // position among inputs and states (--random), -1 for results
  void* data;
  bool held = true;     // false on the ranks of other pipeline stages (no data here)
  std::string stage;    // the pipeline stage holding it ("stage[1]"), empty: every rank
  int stage_parts = 0;  // ranks per block of the stage's group (0: every rank holds it)
  int stage_block = 0;

  bool held_by(int rank) const { return stage_parts == 0 || rank / stage_parts == stage_block; }
};

// The slots this rank holds (inputs and states of other pipeline stages are not here).
inline std::vector<Slot> held_only(std::vector<Slot> slots) {
  std::vector<Slot> kept;
  for (Slot& slot : slots) {
    if (slot.held) kept.push_back(std::move(slot));
  }
  return kept;
}

class ScheduleImpl {
 public:
  virtual ~ScheduleImpl() = default;
  virtual std::vector<Slot> inputs() = 0;   // inputs and states, to fill before the first step
  virtual std::vector<Slot> results() = 0;  // outputs and updated states, after a step
  virtual std::vector<Slot> states() = 0;   // states as stored (warm-up saves and restores them)
  virtual void step(uint64_t seed, uint64_t step_index) = 0;
  virtual void synchronize() {}  // the steps queued are done (a device's; CPU steps are)
  virtual double bytes_per_rank() const = 0;
};

}  // namespace parafuse::ccn
