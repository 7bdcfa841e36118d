// parafuse boostfsm runtime: a pattern set of several engines (fsm/sets/engine_set.hpp) over
// one file across the ranks of an MPI communicator. Every rank maps its byte range once
// (fsm/mpi/range.hpp) and runs each engine over it:
// - a DFA engine as one machine (fsm/mpi/run.hpp: a scan of transfer functions or
//   speculation across ranks, exact either way);
// - an NFA engine whose matches are at most `max_length` bytes long from `max_length`
//   bytes before the range with an empty state (nfa_scan, as its chunks run in one
//   process), reporting at the boundaries inside the range: exact;
// - a prefiltered engine on rank 0 over the whole file (a confirmation may run past any
//   range), with its threads: exact, not split across ranks.
// An NFA engine with unbounded matches cannot start inside the file: with more than one
// rank, every rank refuses alike (one line from rank 0). Counts are summed and matches
// gathered on rank 0, sorted by offset, then tag.
// The engines run through a RankKernels table (fsm/mpi/rank_kernels.hpp), as in fsm/mpi/run.hpp.
#pragma once

#include <fcntl.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "fsm/mpi/run.hpp"
#include "fsm/sets/engine_set.hpp"

namespace parafuse::fsm {
inline namespace v1 {

struct EngineSetMpiResult {  // on rank 0: the whole file's; elsewhere: this rank's share
  SetResult set;
  int ranks = 1;
};

namespace detail {

// NFA reports at the boundaries [in.begin, in.end) (and at n on the last rank).
inline RankPart nfa_rank_part(const RankInput& in, const NfaTables& t, uint32_t tag_count,
                              int threads, bool with_matches, const RankKernels& kernels) {
  RankPart part;
  part.counts.assign(tag_count, 0);
  if (in.length() == 0 && !in.last()) return part;
  // The file as nfa_scan indexes it; only [begin - window, end) is read.
  const uint8_t* file = in.before() ? in.before() - (in.begin - in.window) : nullptr;
  const size_t chunks = std::max<size_t>(1, std::min(size_t(threads) * kLanes, in.length()));
  std::vector<NfaChunk> parts(chunks);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (size_t c = 0; c < chunks; ++c) {
    const size_t begin = in.begin + in.length() * c / chunks;
    const size_t end = in.begin + in.length() * (c + 1) / chunks;
    const size_t scan = begin > t.max_length ? begin - t.max_length : 0;
    parts[c].counts.assign(tag_count, 0);
    if (begin == end && end != in.n) continue;
    kernels.nfa_scan(t, file, in.n, scan, begin, end, with_matches, parts[c]);
  }
  for (const NfaChunk& chunk : parts) {
    for (uint32_t tag = 0; tag < tag_count; ++tag) part.counts[tag] += chunk.counts[tag];
    part.matches.insert(part.matches.end(), chunk.matches.begin(), chunk.matches.end());
  }
  return part;
}

// A prefiltered engine over the whole file on rank 0 (every rank gets an empty part): a
// literal hit's confirmation may run to the end of the input, past any rank's range.
inline RankPart prefilter_on_rank0(const RankInput& in, const std::string& path,
                                   const PrefilterTables& tables, uint32_t tag_count,
                                   const RunOptions& options, int threads,
                                   const RankKernels& kernels, std::string& scheme,
                                   std::string& reason) {
  RankPart part;
  part.counts.assign(tag_count, 0);
  std::string error;
  std::unique_ptr<MappedRange> whole;
  if (in.rank == 0) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    try {
      if (fd < 0) throw std::runtime_error(std::strerror(errno));
      whole = std::make_unique<MappedRange>(fd, 0, in.n);
    } catch (const std::exception& failure) {
      error = "cannot map input '" + path + "': " + failure.what();
    }
    if (fd >= 0) ::close(fd);
  }
  agree_or_throw(in.comm, error);
  if (in.rank != 0) return part;
  const size_t chunks = options.chunks ? options.chunks : size_t(threads) * kLanes;
  PrefilterResult raw = kernels.run_prefilter(tables, whole->data(), in.n, tag_count, options,
                                              threads, chunks);
  part.counts = std::move(raw.counts);
  if (options.matches) part.matches = std::move(raw.matches);
  scheme = raw.scheme;
  reason = "rank 0 runs it over the whole input (a confirmation may run past any rank's "
           "range): " + raw.reason;
  return part;
}

}  // namespace detail

// Runs every engine of the set over `path` across the ranks of `comm` (a collective call).
inline EngineSetMpiResult run_engine_set_mpi(MPI_Comm comm, const std::string& path,
                                             const std::vector<SetEngine>& engines,
                                             uint32_t tag_count, const RunOptions& options,
                                             const RankKernels& kernels) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  size_t lookback = kMpiLookback;
  for (size_t i = 0; i < engines.size(); ++i) {
    if (engines[i].kind != EngineKind::nfa) continue;
    if (!engines[i].nfa.bounded() && ranks > 1)
      throw std::runtime_error(
          "engine " + std::to_string(i) + " of this pattern set is a bit-parallel NFA with "
          "unbounded matches, which cannot start inside the file: run it with one process, "
          "not under mpirun with " + std::to_string(ranks) + " ranks");
    if (engines[i].nfa.bounded()) lookback = std::max<size_t>(lookback, engines[i].nfa.max_length + 1);
  }
  RunOptions checked = options;  // bad options throw alike on every rank
  if (!known_scheme(options.scheme) || options.threads < 0 || options.threads > kMostThreads ||
      options.chunks > kMaxChunks)
    kernels.run_machine(Tables(), nullptr, 0, checked);
  const RankInput in = open_rank_input(comm, path, lookback);
  const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
  EngineSetMpiResult out;
  out.ranks = in.ranks;
  out.set.threads = threads;
  RankPart mine;
  mine.counts.assign(tag_count, 0);
  std::vector<std::string> schemes;
  for (size_t i = 0; i < engines.size(); ++i) {
    RankPart part;
    std::string scheme, reason;
    if (engines[i].kind == EngineKind::prefilter) {
      part = detail::prefilter_on_rank0(in, path, engines[i].prefilter, tag_count, options,
                                        threads, kernels, scheme, reason);
      out.set.final_states.push_back(-1);
    } else if (engines[i].is_dfa()) {
      MachinePart machine = run_machine_part(in, engines[i].tables, options, kernels);
      part = std::move(machine.part);
      out.set.final_states.push_back(machine.final_state);
      scheme = machine.scheme;
      reason = machine.reason;
    } else {
      part = detail::nfa_rank_part(in, engines[i].nfa, tag_count, threads, options.matches,
                                   kernels);
      out.set.final_states.push_back(-1);
      scheme = "nfa";
      reason = "bit-parallel NFA; matches are at most " + std::to_string(engines[i].nfa.max_length) +
               " bytes long, so each rank starts exactly from that much lookback";
    }
    for (uint32_t tag = 0; tag < tag_count; ++tag) mine.counts[tag] += part.counts[tag];
    mine.matches.insert(mine.matches.end(), part.matches.begin(), part.matches.end());
    if (std::find(schemes.begin(), schemes.end(), scheme) == schemes.end()) schemes.push_back(scheme);
    out.set.reason += (i ? "; engine " : "engine ") + std::to_string(i) + " (" +
                      kind_name(engines[i].kind) + ", " + scheme + "): " + reason;
  }
  for (size_t i = 0; i < schemes.size(); ++i) out.set.scheme += (i ? "+" : "") + schemes[i];
  RankPart whole = gather_parts(in, std::move(mine));
  out.set.counts = std::move(whole.counts);
  out.set.matches = std::move(whole.matches);
  return out;
}

}  // namespace v1
}  // namespace parafuse::fsm
