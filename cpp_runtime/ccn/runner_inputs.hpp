// The runner's inputs: each rank's block of the --inputs .npy files (checked against the
// program's dtypes and shapes), or --random values from Philox.
#pragma once
#include "ccn/namespace.hpp"
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#include "ccn/half.hpp"
#include "ccn/npy.hpp"
#include "ccn/philox.hpp"
#include "ccn/program.hpp"
#include "ccn/runner_options.hpp"

namespace parafuse::ccn {

// Copy this rank's block out of a whole row-major tensor.
inline void copy_block(const char* whole, char* out, const Local& local, size_t item) {
  size_t dims = local.logical.size();
  if (dims == 0) {
    std::memcpy(out, whole, item);
    return;
  }
  if (local.count == 0) return;
  std::vector<int64_t> index(dims, 0);
  int64_t inner = local.shape[dims - 1];
  for (int64_t done = 0; done < local.count; done += inner) {
    int64_t offset = 0;
    for (size_t d = 0; d < dims; ++d) offset = offset * local.logical[d] + local.start[d] + index[d];
    if (inner) std::memcpy(out + done * item, whole + offset * item, inner * item);
    for (int d = static_cast<int>(dims) - 2; d >= 0; --d) {
      if (++index[d] < local.shape[d]) break;
      index[d] = 0;
    }
    if (dims == 1) break;
  }
}

inline std::string input_path(const RunnerOptions& o, const Slot& s, int rank) {
  return o.inputs + "/" + s.name + (s.per_rank ? ".rank" + std::to_string(rank) : "") + ".npy";
}

inline void load_slot(const RunnerOptions& o, const Slot& slot, int rank) {
  std::string path = input_path(o, slot, rank);
  NpyArray array;
  try {
    array = read_npy(path);
  } catch (const std::exception& e) {
    throw InputError(path + ": " + e.what() + " for '" + slot.name + "'");
  }
  std::string want = npy_descr(slot.dtype);
  bool v2 = slot.dtype == DType::bf16 && (array.descr == "<V2" || array.descr == "|V2");
  if (array.descr != want && !v2 && !(want == "|b1" && array.descr == "?")) {
    throw InputError(path + ": dtype " + array.descr + " but '" + slot.name + "' is " +
                     dtype_name(slot.dtype));
  }
  if (array.shape != slot.local.logical) {
    std::string got, expected;
    for (auto d : array.shape) got += (got.empty() ? "" : ", ") + std::to_string(d);
    for (auto d : slot.local.logical) expected += (expected.empty() ? "" : ", ") + std::to_string(d);
    throw InputError(path + ": shape [" + got + "] but '" + slot.name + "' is [" + expected + "]");
  }
  size_t item = dtype_size(slot.dtype);
  int64_t whole = 1;
  for (auto d : array.shape) whole *= d;
  if (array.data.size() < static_cast<size_t>(whole) * item) throw InputError(path + ": truncated data");
  Local source = slot.local;
  if (slot.per_rank) source.start.assign(source.start.size(), 0);
  copy_block(array.data.data(), static_cast<char*>(slot.data), source, item);
}

template <typename T> void fill_random(T* out, const Local& local, uint64_t seed, int ordinal,
                                       uint32_t rank_or_0) {
  size_t dims = local.logical.size();
  std::vector<int64_t> index(dims, 0);
  for (int64_t i = 0; i < local.count; ++i) {
    int64_t logical = 0;
    for (size_t d = 0; d < dims; ++d) logical = logical * local.logical[d] + local.start[d] + index[d];
    float u = philox_uniform(static_cast<uint64_t>(logical), rank_or_0, 0x80000000u | ordinal, seed);
    float v = 2.0f * u - 1.0f;
    if constexpr (std::is_integral_v<T>) out[i] = static_cast<T>(std::floor(double(v) * 100.0));
    else out[i] = store_as<T>(v);
    for (int d = static_cast<int>(dims) - 1; d >= 0; --d) {
      if (++index[d] < local.shape[d]) break;
      index[d] = 0;
    }
  }
}

inline void random_slot(const Slot& s, uint64_t seed, int rank) {
  uint32_t rank_or_0 = s.per_rank ? static_cast<uint32_t>(rank) : 0u;
  switch (s.dtype) {
    case DType::f16: fill_random(static_cast<f16*>(s.data), s.local, seed, s.ordinal, rank_or_0); break;
    case DType::bf16: fill_random(static_cast<bf16*>(s.data), s.local, seed, s.ordinal, rank_or_0); break;
    case DType::f32: fill_random(static_cast<float*>(s.data), s.local, seed, s.ordinal, rank_or_0); break;
    case DType::f64: fill_random(static_cast<double*>(s.data), s.local, seed, s.ordinal, rank_or_0); break;
    case DType::i32: fill_random(static_cast<int32_t*>(s.data), s.local, seed, s.ordinal, rank_or_0); break;
    case DType::i64: fill_random(static_cast<int64_t*>(s.data), s.local, seed, s.ordinal, rank_or_0); break;
    case DType::b8: fill_random(static_cast<uint8_t*>(s.data), s.local, seed, s.ordinal, rank_or_0); break;
  }
}

}  // namespace parafuse::ccn
