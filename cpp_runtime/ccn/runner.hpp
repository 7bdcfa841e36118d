// The runner contract of spec section 5, shared by every generated P_run:
//   mpirun -np R P_run --size N=... [--schedule S] [--inputs IN] [--outputs OUT]
//          [--param k=v ...] [--seed S] [--iters K] [--warmup W] [--random] [--json]
// Bad input is found by every rank before any step; rank 0 prints one line and
// every rank exits non-zero without writing anything.
#pragma once
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "mpi_util.hpp"
#include "npy.hpp"
#include "philox.hpp"
#include "program.hpp"

// The "backend" of the runner's report; a CUDA project defines it as "cuda".
#ifndef PF_BACKEND_NAME
#define PF_BACKEND_NAME "cpu"
#endif

namespace pf {

struct ProgramInfo {
  std::string name;
  std::vector<std::string> size_names, param_names, required_params, schedules;
  std::string default_schedule;
  std::vector<std::pair<std::string, int>> groups;           // name, blocks
  std::vector<std::pair<int, int>> broadcast_roots;           // root, blocks of its group (1: world)
};

using Factory = std::function<std::unique_ptr<ScheduleImpl>(
    MPI_Comm, const std::vector<int64_t>&, const std::string&,
    const std::map<std::string, std::string>&)>;

struct RunnerOptions {
  std::map<std::string, std::string> sizes, params;
  std::string schedule, inputs, outputs;
  uint64_t seed = 0;
  long iters = 1, warmup = 0;
  bool random = false, json = false;
};

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline void split_assignment(const std::string& option, const std::string& text,
                             std::map<std::string, std::string>& into) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError(option + " " + text + ": expected NAME=VALUE");
  }
  into[text.substr(0, eq)] = text.substr(eq + 1);
}

inline long parse_long(const std::string& option, const std::string& text) {
  try {
    size_t used = 0;
    long value = std::stol(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  throw InputError(option + " " + text + ": not an integer");
}

inline RunnerOptions parse_options(int argc, char** argv) {
  RunnerOptions o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw InputError(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--size") split_assignment(arg, value(), o.sizes);
    else if (arg == "--param") split_assignment(arg, value(), o.params);
    else if (arg == "--schedule") o.schedule = value();
    else if (arg == "--inputs") o.inputs = value();
    else if (arg == "--outputs") o.outputs = value();
    else if (arg == "--seed") o.seed = static_cast<uint64_t>(parse_long(arg, value()));
    else if (arg == "--iters") o.iters = parse_long(arg, value());
    else if (arg == "--warmup") o.warmup = parse_long(arg, value());
    else if (arg == "--random") o.random = true;
    else if (arg == "--json") o.json = true;
    else throw InputError("unknown option " + arg);
  }
  return o;
}

inline std::vector<int64_t> resolve_sizes(const ProgramInfo& info, const RunnerOptions& o) {
  for (const auto& [name, text] : o.sizes) {
    if (std::find(info.size_names.begin(), info.size_names.end(), name) == info.size_names.end()) {
      throw InputError("--size " + name + ": program '" + info.name + "' has no size variable '" +
                       name + "'");
    }
  }
  std::vector<int64_t> sizes;
  for (const auto& name : info.size_names) {
    auto it = o.sizes.find(name);
    if (it == o.sizes.end()) throw InputError("missing --size " + name + "=...");
    long value = parse_long("--size " + name + "=", it->second);
    if (value < 1) throw InputError("--size " + name + "=" + it->second + ": sizes must be at least 1");
    sizes.push_back(value);
  }
  return sizes;
}

inline void check_launch(const ProgramInfo& info, const RunnerOptions& o, int ranks) {
  if (o.iters < 1) throw InputError("--iters " + std::to_string(o.iters) + ": at least one step is needed");
  if (o.warmup < 0) throw InputError("--warmup must not be negative");
  if (std::find(info.schedules.begin(), info.schedules.end(), o.schedule) == info.schedules.end()) {
    std::string known;
    for (const auto& s : info.schedules) known += (known.empty() ? "" : ", ") + s;
    throw InputError("unknown --schedule " + o.schedule + " (this build has: " + known + ")");
  }
  for (const auto& [name, text] : o.params) {
    if (std::find(info.param_names.begin(), info.param_names.end(), name) == info.param_names.end()) {
      throw InputError("--param " + name + ": program '" + info.name + "' has no param '" + name + "'");
    }
  }
  for (const auto& name : info.required_params) {
    if (!o.params.count(name)) throw InputError("missing --param " + name + "=...: it has no default");
  }
  for (const auto& [name, blocks] : info.groups) {
    if (ranks % blocks) {
      throw InputError(std::to_string(ranks) + " ranks cannot be split into " +
                       std::to_string(blocks) + " equal blocks for group '" + name + "'");
    }
  }
  for (const auto& [root, blocks] : info.broadcast_roots) {
    if (root >= ranks / blocks) {
      throw InputError("broadcast root " + std::to_string(root) + " is not a rank of its block");
    }
  }
}

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

// Every rank reports its first problem; rank 0 prints the first one (in rank order).
inline bool agree_on_errors(const std::string& mine, const std::string& program, MPI_Comm comm) {
  int length = static_cast<int>(mine.size()), ranks = comm_size(comm), rank = comm_rank(comm);
  std::vector<int> lengths(ranks);
  PF_MPI(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm));
  bool any = std::any_of(lengths.begin(), lengths.end(), [](int n) { return n > 0; });
  if (!any) return false;
  std::vector<int> displs = displacements(lengths);
  std::string all(displs.back() + lengths.back(), '\0');
  PF_MPI(MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), displs.data(),
                     MPI_CHAR, 0, comm));
  if (rank == 0) {
    for (int r = 0; r < ranks; ++r) {
      if (lengths[r]) {
        std::fprintf(stderr, "%s_run: error: %s\n", program.c_str(),
                     all.substr(displs[r], lengths[r]).c_str());
        break;
      }
    }
  }
  return true;
}

inline std::string shape_json(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

inline void write_results(const RunnerOptions& o, ScheduleImpl& impl, const ProgramInfo& info,
                          int rank, int ranks, const std::vector<int64_t>& sizes) {
  std::string manifest = "{\n  \"program\": \"" + info.name + "\",\n  \"schedule\": \"" +
                         o.schedule + "\",\n  \"ranks\": " + std::to_string(ranks) +
                         ",\n  \"outputs\": [\n";
  std::vector<Slot> results = impl.results();
  for (size_t k = 0; k < results.size(); ++k) {
    const Slot& s = results[k];
    write_npy(o.outputs + "/" + s.name + ".rank" + std::to_string(rank) + ".npy",
              npy_descr(s.dtype), s.local.shape, s.data, s.local.count * dtype_size(s.dtype));
    std::string files;
    for (int r = 0; r < ranks; ++r) {
      files += std::string(r ? ", " : "") + "\"" + s.name + ".rank" + std::to_string(r) + ".npy\"";
    }
    manifest += "    {\"name\": \"" + s.name + "\", \"value\": \"" + s.value + "\", \"dtype\": \"" +
                dtype_name(s.dtype) + "\", \"shape\": " + shape_json(s.local.logical) +
                ", \"layout\": \"" + s.layout + "\", \"files\": [" + files + "]}" +
                (k + 1 < results.size() ? ",\n" : "\n");
  }
  std::string size_text;
  for (size_t i = 0; i < sizes.size(); ++i) {
    size_text += (i ? ", " : "") + std::string("\"") + info.size_names[i] + "\": " + std::to_string(sizes[i]);
  }
  manifest += "  ],\n  \"sizes\": {" + size_text + "}\n}\n";
  if (rank == 0) write_text_atomically(o.outputs + "/manifest.json", manifest);
}

inline std::string json_sizes(const ProgramInfo& info, const std::vector<int64_t>& sizes) {
  std::string text;
  for (size_t i = 0; i < sizes.size(); ++i) {
    text += (i ? ", " : "") + std::string("\"") + info.size_names[i] + "\": " + std::to_string(sizes[i]);
  }
  return "{" + text + "}";
}

// Fault injection for tests: PARAFUSE_FAIL_RANK=r makes rank r fail inside its first step.
inline void injected_failure(MPI_Comm comm) {
  const char* text = std::getenv("PARAFUSE_FAIL_RANK");
  if (text && std::atoi(text) == comm_rank(comm)) {
    throw std::runtime_error("failure injected by PARAFUSE_FAIL_RANK");
  }
}

// Run `step` once per timed iteration; the time of a step is the largest over the ranks.
inline std::vector<double> timed_steps(ScheduleImpl& impl, const RunnerOptions& o, MPI_Comm comm) {
  std::vector<double> times;
  for (long k = 0; k < o.iters; ++k) {
    PF_MPI(MPI_Barrier(comm));
    if (k == 0) injected_failure(comm);
    auto begin = std::chrono::steady_clock::now();
    impl.step(o.seed, static_cast<uint64_t>(k));
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
    double slowest = ms;
    PF_MPI(MPI_Allreduce(&ms, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm));
    times.push_back(slowest);
  }
  return times;
}

// Warm-up steps whose effects are discarded: states are saved before and restored after.
inline void warm_up(ScheduleImpl& impl, const RunnerOptions& o) {
  if (o.warmup == 0) return;
  std::vector<std::vector<char>> saved;
  for (const Slot& s : impl.states()) {
    const char* data = static_cast<const char*>(s.data);
    saved.emplace_back(data, data + s.local.count * dtype_size(s.dtype));
  }
  for (long k = 0; k < o.warmup; ++k) impl.step(o.seed, 0);
  std::vector<Slot> states = impl.states();
  for (size_t i = 0; i < states.size(); ++i) std::memcpy(states[i].data, saved[i].data(), saved[i].size());
}

inline std::unique_ptr<ScheduleImpl> prepare(int argc, char** argv, const ProgramInfo& info,
                                             const Factory& make, RunnerOptions& o,
                                             std::vector<int64_t>& sizes, MPI_Comm comm) {
  int rank = comm_rank(comm), ranks = comm_size(comm);
  std::string problem;
  std::unique_ptr<ScheduleImpl> impl;
  try {
    o = parse_options(argc, argv);
    if (o.schedule.empty()) o.schedule = info.default_schedule;
    check_launch(info, o, ranks);
    sizes = resolve_sizes(info, o);
    if (o.inputs.empty() && !o.random) throw InputError("no inputs: pass --inputs DIR or --random");
    impl = make(comm, sizes, o.schedule, o.params);
    for (const Slot& slot : impl->inputs()) {
      if (o.random) random_slot(slot, o.seed, rank);
      else load_slot(o, slot, rank);
    }
    if (!o.outputs.empty() && rank == 0) std::filesystem::create_directories(o.outputs);
  } catch (const std::exception& e) {
    problem = e.what();
  }
  if (agree_on_errors(problem, info.name, comm)) return nullptr;
  return impl;
}

inline int run_main(int argc, char** argv, const ProgramInfo& info, const Factory& make) {
  PF_MPI(MPI_Init(&argc, &argv));
  MPI_Comm comm = MPI_COMM_WORLD;
  RunnerOptions o;
  std::vector<int64_t> sizes;
  std::unique_ptr<ScheduleImpl> impl = prepare(argc, argv, info, make, o, sizes, comm);
  if (!impl) {
    MPI_Finalize();
    return 1;
  }
  int rank = comm_rank(comm), ranks = comm_size(comm);
  try {
    warm_up(*impl, o);
    std::vector<double> times = timed_steps(*impl, o, comm);
    PF_MPI(MPI_Barrier(comm));
    if (!o.outputs.empty()) write_results(o, *impl, info, rank, ranks, sizes);
    std::sort(times.begin(), times.end());
    double median = times.size() % 2 ? times[times.size() / 2]
                                     : 0.5 * (times[times.size() / 2 - 1] + times[times.size() / 2]);
    if (rank == 0 && o.json) {
      std::printf("{\"program\": \"%s\", \"schedule\": \"%s\", \"backend\": \"" PF_BACKEND_NAME "\", "
                  "\"ranks\": %d, \"sizes\": %s, \"iters\": %ld, \"warmup\": %ld, "
                  "\"median_ms\": %.6f, \"min_ms\": %.6f, \"bytes_per_rank\": %.0f}\n",
                  info.name.c_str(), o.schedule.c_str(), ranks, json_sizes(info, sizes).c_str(),
                  o.iters, o.warmup, median, times.front(), impl->bytes_per_rank());
    } else if (rank == 0) {
      std::printf("%s [%s] on %d rank(s), backend " PF_BACKEND_NAME ": %ld step(s), median %.3f ms\n",
                  info.name.c_str(), o.schedule.c_str(), ranks, o.iters, median);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s_run: error on rank %d: %s\n", info.name.c_str(), rank, e.what());
    MPI_Abort(comm, 2);
  }
  impl.reset();
  MPI_Finalize();
  return 0;
}

}  // namespace pf
