// parafuse boostfsm runtime: one machine over one file across the ranks of an MPI
// communicator (docs/fsm-language.md section 8, "Beyond one machine"). Each rank runs its
// own byte range (fsm/mpi/range.hpp) with the machine's schemes and threads; the ranks
// learn their true start states in one of two ways:
//
// - A scan of transfer functions: each rank summarises its range by SIMD enumeration
//   (fsm/simd/range_summary.hpp: the state after the range from every state, and the
//   counts from every start), the ranks exchange the transfer functions (MPI_Allgather,
//   `states` words each) and each composes its predecessors' from the start state. One
//   pass, exact, whatever the machine: the permutation machine, whose paths never merge,
//   gains from every rank. Matches (or more report groups than the kernels count) need a
//   second pass over the range from its now known start.
// - Speculation: rank 0 starts in the start state, every other rank in the state most
//   paths reach over the kMpiLookback bytes before its range; rounds of MPI_Allgather of
//   (start used, state after) confirm the chain up to the first wrong guess and re-run the
//   later ranks whose start differs from their predecessor's end: at most R rounds.
//
// `enum` asks for the scan (where a SIMD plan exists), the other schemes for speculation;
// `auto` speculates where, before every rank's range, the paths from all states met (the
// guess is then certainly right and each rank runs the fastest scheme once), and scans
// otherwise. Ranges run without the machine's end-of-input reports; the last rank adds
// those of the file's final state.
//
// The runtime's schemes are called through a RankKernels table (fsm/mpi/rank_kernels.hpp),
// compiled in the machine's own library, so that this code compiles without them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fsm/mpi/range.hpp"
#include "fsm/mpi/rank_kernels.hpp"

namespace parafuse::fsm {
inline namespace v1 {

constexpr size_t kMpiPredictRuns = 1024;

// One machine's share of the result on this rank.
struct MachinePart {
  RankPart part;             // counts, and matches at offsets in the file
  uint32_t final_state = 0;  // the file's (the machine's state number), on every rank
  std::string scheme, reason;
  int threads = 1, rounds = 1, reruns = 0;
};

namespace detail {

// Runs of the machine over this rank's range (internal state numbers, no end reports).
class RangeRunner {
 public:
  RangeRunner(const RankInput& in, const Tables& t, const RunOptions& options,
              const RankKernels& kernels)
      : in_(in), quiet_(t), options_(options), kernels_(kernels), no_end_(t.states + 1, 0),
        internal_(t.states) {
    quiet_.end_begin = no_end_.data();  // ranges end inside the file, not at its end
    for (uint32_t s = 0; s < t.states; ++s) internal_[t.external[s]] = s;
  }
  RunResult run(uint32_t start) {
    quiet_.start = start;
    RunResult done = kernels_.run_machine(quiet_, in_.bytes(), in_.length(), options_);
    done.final_state = internal_[done.final_state];
    for (Match& match : done.matches) match.offset += in_.begin;
    return done;
  }
  // The end state of the window before the range from every state (internal numbers).
  std::vector<uint32_t> window_ends(const SimdPlan& plan) {
    if (plan.path != SimdPath::none)
      return kernels_.summarize_range(quiet_, plan, in_.before(), in_.window, 1, false).after;
    std::vector<uint32_t> ends(quiet_.states);
    RunOptions walk;
    walk.scheme = scheme_name(Scheme::seq), walk.threads = 1;
    const uint32_t tried = quiet_.states > kMpiPredictRuns ? 1 : quiet_.states;
    ends.resize(tried);
    for (uint32_t s = 0; s < tried; ++s) {
      quiet_.start = tried == 1 ? quiet_.start : s;
      ends[s] = internal_[kernels_.run_machine(quiet_, in_.before(), in_.window, walk).final_state];
    }
    return ends;
  }

 private:
  const RankInput& in_;
  Tables quiet_;
  RunOptions options_;
  const RankKernels& kernels_;
  std::vector<uint32_t> no_end_, internal_;
};

inline uint32_t most_frequent(const std::vector<uint32_t>& ends) {
  std::map<uint32_t, uint32_t> seen;  // ties: the smallest state
  for (uint32_t state : ends) ++seen[state];
  return std::max_element(seen.begin(), seen.end(), [](const auto& a, const auto& b) {
           return a.second < b.second;
         })->first;
}

// Speculation across ranks; returns this rank's run from its true start.
inline RunResult speculate(const RankInput& in, const Tables& t, RangeRunner& runner,
                           uint32_t guess, MachinePart& out) {
  RunResult mine = runner.run(guess);
  std::vector<uint32_t> pair(2), pairs(2 * size_t(in.ranks));
  for (out.rounds = 1;; ++out.rounds) {
    pair = {guess, mine.final_state};
    MPI_Allgather(pair.data(), 2, MPI_UINT32_T, pairs.data(), 2, MPI_UINT32_T, in.comm);
    uint32_t state = t.start;
    int confirmed = 0;
    while (confirmed < in.ranks && pairs[2 * size_t(confirmed)] == state)
      state = pairs[2 * size_t(confirmed) + 1], ++confirmed;
    if (confirmed == in.ranks) break;
    for (int r = std::max(confirmed, 1); r < in.ranks; ++r)
      out.reruns += pairs[2 * size_t(r)] != pairs[2 * size_t(r) - 1];
    if (in.rank >= confirmed && in.rank > 0 && pairs[2 * size_t(in.rank) - 1] != guess) {
      guess = pairs[2 * size_t(in.rank) - 1];
      mine = runner.run(guess);
    }
  }
  out.final_state = pairs.back();
  return mine;
}

}  // namespace detail

// Runs machine `t` from t.start over the file of `in` (a collective call); every rank
// gets its own share, with the file's final state.
inline MachinePart run_machine_part(const RankInput& in, const Tables& t, const RunOptions& options,
                                    const RankKernels& kernels) {
  check_threads(options.threads);  // alike on every rank, before any collective
  check_chunks(options.chunks);
  const Scheme asked = scheme_named(options.scheme);
  MachinePart out;
  out.threads = options.threads > 0 ? options.threads : omp_get_max_threads();
  detail::RangeRunner runner(in, t, options, kernels);
  const SimdPlan plan = asked == Scheme::enumeration || asked == Scheme::automatic
                            ? kernels.plan_for_tables(t, options.simd) : SimdPlan();
  const bool can_scan = plan.path != SimdPath::none;
  std::vector<uint32_t> window_ends;
  if (in.rank > 0 && in.window > 0) window_ends = runner.window_ends(plan);
  int merged = window_ends.empty() || std::all_of(window_ends.begin(), window_ends.end(),
                                                  [&](uint32_t s) { return s == window_ends[0]; });
  int all_merged = 1;
  MPI_Allreduce(&merged, &all_merged, 1, MPI_INT, MPI_MIN, in.comm);
  const bool scan = can_scan && (asked == Scheme::enumeration || !all_merged);
  std::ostringstream how;
  how << in.ranks << " ranks, each over its own byte range; ";
  RunResult mine;
  uint32_t start = t.start;
  if (scan) {
    const RangeSummary summary =
        kernels.summarize_range(t, plan, in.bytes(), in.length(), out.threads, !options.matches);
    std::vector<uint32_t> every(size_t(t.states) * size_t(in.ranks));
    MPI_Allgather(summary.after.data(), int(t.states), MPI_UINT32_T, every.data(), int(t.states),
                  MPI_UINT32_T, in.comm);
    uint32_t state = t.start;
    for (int r = 0; r < in.ranks; ++r) {
      if (r == in.rank) start = state;
      state = every[size_t(r) * t.states + state];
    }
    out.final_state = state;
    how << "each rank summarised its range by SIMD enumeration (" << simd_path_words(plan)
        << ") and the ranks combined their transfer functions (one MPI_Allgather, then each "
        << "composed its predecessors'), so every rank knew its true start after one pass";
    if (summary.counted) {
      mine.counts.assign(summary.counts.begin() + size_t(start) * t.tag_count,
                         summary.counts.begin() + size_t(start + 1) * t.tag_count);
      mine.scheme = scheme_name(Scheme::enumeration);
      how << " and took its counts from that start's lanes";
    } else {
      mine = runner.run(start);
      how << ", then walked its range again from it ("
          << (options.matches ? "for the matches" : "more report groups than the lanes count")
          << "); rank 0: " << mine.reason;
    }
  } else {
    const bool predicted = !window_ends.empty();
    start = predicted ? detail::most_frequent(window_ends) : t.start;
    mine = detail::speculate(in, t, runner, start, out);
    how << "speculation across ranks (";
    if (in.ranks == 1) how << "one rank: nothing to combine; ";
    else if (all_merged) how << "before every rank's range the paths from all states met, so ";
    else if (!plan.why_not.empty())
      how << "no scan of transfer functions: " << plan.why_not << "; ";
    how << "predicted from " << kMpiLookback << " bytes) took " << out.rounds << " rounds and "
        << out.reruns << " re-runs of a rank's range; rank 0: " << mine.reason;
  }
  out.part.counts = std::move(mine.counts);
  out.part.counts.resize(t.tag_count, 0);
  out.part.matches = std::move(mine.matches);
  const uint32_t final_internal = out.final_state;
  if (in.last())  // the file's end-of-input reports
    for (uint32_t i = t.end_begin[final_internal]; i < t.end_begin[final_internal + 1]; ++i) {
      ++out.part.counts[t.end_list[i] & ~kDelayed];
      if (options.matches)
        out.part.matches.push_back(Match{in.n - (t.end_list[i] >> 31), t.end_list[i] & ~kDelayed});
    }
  out.final_state = t.external[final_internal];
  out.scheme = asked == Scheme::automatic ? mine.scheme : options.scheme;
  out.reason = how.str();
  return out;
}

}  // namespace v1
}  // namespace parafuse::fsm
