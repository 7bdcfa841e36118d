// What the runner tells: the first bad input of any rank (printed by rank 0), and the
// results (.npy per rank and manifest.json) written to --outputs.
#pragma once
#include "ccn/namespace.hpp"
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "ccn/mpi_util.hpp"
#include "ccn/npy.hpp"
#include "ccn/program.hpp"
#include "ccn/runner_options.hpp"

namespace parafuse::ccn {

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

// The outputs, whole or not at all: every rank writes its files; where any rank could not
// (a full disk, a read-only folder), rank 0 prints that one line and every rank removes
// the files it wrote; else rank 0 writes the manifest last. False where nothing is kept.
inline bool write_results(const RunnerOptions& o, ScheduleImpl& impl, const ProgramInfo& info,
                          int rank, int ranks, const std::vector<int64_t>& sizes, MPI_Comm comm) {
  std::string manifest = "{\n  \"program\": \"" + info.name + "\",\n  \"schedule\": \"" +
                         o.schedule + "\",\n  \"ranks\": " + std::to_string(ranks) +
                         ",\n  \"outputs\": [\n";
  std::vector<Slot> results = impl.results();
  std::vector<std::string> written;
  std::string problem;
  for (size_t k = 0; k < results.size(); ++k) {
    const Slot& s = results[k];
    const std::string path = o.outputs + "/" + s.name + ".rank" + std::to_string(rank) + ".npy";
    if (problem.empty() && s.held) {
      try {
        write_npy(path, npy_descr(s.dtype), s.local.shape, s.data,
                  s.local.count * dtype_size(s.dtype));
        written.push_back(path);
      } catch (const std::exception& e) {
        problem = e.what();
      }
    }
    std::string files;
    for (int r = 0; r < ranks; ++r) {
      if (!s.held_by(r)) continue;
      files += std::string(files.empty() ? "" : ", ") + "\"" + s.name + ".rank" + std::to_string(r) + ".npy\"";
    }
    std::string stage = s.stage.empty() ? "" : ", \"stage\": \"" + s.stage + "\"";
    manifest += "    {\"name\": \"" + s.name + "\", \"value\": \"" + s.value + "\", \"dtype\": \"" +
                dtype_name(s.dtype) + "\", \"shape\": " + shape_json(s.local.logical) +
                ", \"layout\": \"" + s.layout + "\", \"files\": [" + files + "]" + stage + "}" +
                (k + 1 < results.size() ? ",\n" : "\n");
  }
  std::string size_text;
  for (size_t i = 0; i < sizes.size(); ++i) {
    size_text += (i ? ", " : "") + std::string("\"") + info.size_names[i] + "\": " + std::to_string(sizes[i]);
  }
  manifest += "  ],\n  \"sizes\": {" + size_text + "}\n}\n";
  bool failed = agree_on_errors(problem, info.name, comm);
  if (!failed) {
    if (rank == 0) {
      try {
        write_text_atomically(o.outputs + "/manifest.json", manifest);
      } catch (const std::exception& e) {
        problem = e.what();
      }
    }
    failed = agree_on_errors(problem, info.name, comm);
  }
  if (failed) {
    for (const std::string& path : written) std::remove(path.c_str());
  }
  return !failed;
}

inline std::string json_sizes(const ProgramInfo& info, const std::vector<int64_t>& sizes) {
  std::string text;
  for (size_t i = 0; i < sizes.size(); ++i) {
    text += (i ? ", " : "") + std::string("\"") + info.size_names[i] + "\": " + std::to_string(sizes[i]);
  }
  return "{" + text + "}";
}

}  // namespace parafuse::ccn
