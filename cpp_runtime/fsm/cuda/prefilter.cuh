// parafuse boostfsm on GPUs: a prefiltered engine (fsm/sets/prefilter_tables.hpp), as
// fsm/sets/prefilter_engine.hpp runs it on the CPU, over an input in device memory:
//   1. the literal DFA by the GPU's schemes (run.cuh), listing (factor end, pattern) hits;
//   2. the host sorts the hits by pattern (a counting sort);
//   3. find_start_ranges: one device thread a pattern merges its hits into ranges of match
//      starts ([first, q - shortest], `first` as far back as the bytes allow, within
//      `reach`);
//   4. confirm_jobs: one device thread a job (a run of at most kRangesPerJob of a pattern's
//      ranges) sweeps its ranges with the pattern's NFA (nfa.cuh): new threads start only
//      inside a range, the sweep runs on while a thread lives and jumps to the next range
//      when none does. Counted, or (a scan of the counts placing them) listed by a second
//      sweep. A job may sweep on past its last range into the next job's and find a match
//      that job finds too: where a pattern has several jobs, the matches are listed, sorted
//      and made unique on the host, and counted from there.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fsm/cuda/nfa_run.cuh"
#include "fsm/sets/prefilter_tables.hpp"

namespace parafuse::fsm::cuda {

struct ConfirmBounds {
  uint64_t reach = 0, shortest = 0;  // reach all ones: unbounded
  uint64_t before[4] = {0, 0, 0, 0};  // the bytes that may precede a match's factor
};

struct DeviceRange {
  uint64_t first, last;  // inclusive match starts
};

__global__ void find_start_ranges(const uint8_t* data, uint64_t patterns,
                                  const ConfirmBounds* bounds, const uint64_t* ends,
                                  const uint64_t* first_end, DeviceRange* ranges,
                                  uint64_t* range_count) {
  const uint64_t k = thread_index();
  if (k >= patterns) return;
  const ConfirmBounds& c = bounds[k];
  DeviceRange* list = ranges + first_end[k];
  uint64_t count = 0;
  for (uint64_t e = first_end[k]; e < first_end[k + 1]; ++e) {
    const uint64_t q = ends[e];
    uint64_t lower = q > c.reach ? q - c.reach : 0;
    if (count && list[count - 1].last + 1 > lower) lower = list[count - 1].last + 1;
    uint64_t first = q;
    while (first > lower && ((c.before[data[first - 1] >> 6] >> (data[first - 1] & 63)) & 1))
      --first;
    const uint64_t last = q - c.shortest;
    if (count && first <= list[count - 1].last + 1) list[count - 1].last = last;
    else list[count++] = DeviceRange{first, last};
  }
  range_count[k] = count;
}

// A run of one pattern's ranges, swept by one device thread: ranges [first, first + count)
// of the pattern's list.
struct ConfirmJob {
  uint64_t pattern, first, count;
};
constexpr uint64_t kRangesPerJob = 64;

// Job j's matches in its ranges, by its pattern's NFA; its sets: NfaSets<W> (`scratch`: 2 *
// words_each a job, for W == 0). Counts per tag into `counts` and the job's matches into
// match_counts[j]; or, with `out`, writes them from out + first[j].
template <uint32_t W>
__global__ void confirm_jobs(const DeviceNfa* nfas, const uint8_t* data, uint64_t n,
                             uint64_t jobs, const ConfirmJob* job_list, const DeviceRange* ranges,
                             const uint64_t* first_end, uint64_t* scratch, uint64_t words_each,
                             unsigned long long* counts, unsigned long long* match_counts,
                             const unsigned long long* first, Match* out) {
  const uint64_t j = thread_index();
  if (j >= jobs) return;
  const ConfirmJob job = job_list[j];
  const DeviceNfa& t = nfas[job.pattern];
  const DeviceRange* list = ranges + first_end[job.pattern] + job.first;
  const uint64_t count = job.count;
  NfaSets<W> sets(scratch, j, uint32_t(words_each));
  uint64_t* const state = sets.state;
  uint64_t* const cand = sets.cand;
  unsigned long long found = 0;
  Match* next = out ? out + first[j] : nullptr;
  uint64_t index = 0, at = list[0].first;
  for (uint32_t w = 0; w < t.words; ++w) state[w] = 0;
  bool alive = false;
  while (at < n) {
    while (index < count && list[index].last < at) ++index;
    const bool inject = index < count && list[index].first <= at;
    alive = nfa_step(t, state, cand, t.byte_positions + size_t(data[at]) * t.words,
                     nfa_where(t, data, n, at), alive, inject);
    ++at;
    if (alive)
      nfa_report(t, state, nfa_where(t, data, n, at), [&](uint32_t tag) {
        if (next) *next++ = Match{at, tag};
        else add_count(&counts[tag], 1ull), ++found;
      });
    while (index < count && list[index].last < at) ++index;
    if (!alive && !(index < count && list[index].first <= at)) {
      if (index == count) break;
      at = list[index].first;  // no thread lives: on to the next range
      for (uint32_t w = 0; w < t.words; ++w) state[w] = 0;
    }
  }
  if (!next) match_counts[j] = found;
}

// The engine over data[0, n) in device memory; `scheme` and `reason` say what ran.
inline NfaRun run_prefilter_cuda(const PrefilterTables& p, const uint8_t* data, size_t n,
                                 uint32_t tag_count, const RunOptions& options,
                                 cudaStream_t stream, std::string& scheme, std::string& reason) {
  RunOptions literal_options = options;
  literal_options.matches = true;
  const RunResult hits = run_machine_on(p.literals, data, n, literal_options, true, stream);
  scheme = hits.scheme;
  const size_t patterns = p.confirms.size();
  std::vector<size_t> confirm_of(tag_count, 0);
  for (size_t k = 0; k < patterns; ++k) confirm_of[p.confirms[k].tag] = k;
  std::vector<uint64_t> first_end(patterns + 1, 0), ends(hits.matches.size());
  for (const Match& hit : hits.matches) ++first_end[confirm_of[hit.tag] + 1];
  for (size_t k = 0; k < patterns; ++k) first_end[k + 1] += first_end[k];
  std::vector<uint64_t> filled(first_end.begin(), first_end.end() - 1);
  for (const Match& hit : hits.matches) ends[filled[confirm_of[hit.tag]]++] = hit.offset;
  NfaRun run;
  run.chunks = patterns;
  run.counts.assign(tag_count, 0);
  reason = "literal DFA (" + hits.scheme + ": " + hits.reason + ") found " +
           std::to_string(ends.size()) + " factor ends";
  if (ends.empty()) return run;
  std::vector<ConfirmBounds> bounds(patterns);
  std::vector<const NfaTables*> tables;
  uint64_t words_each = 1;
  for (size_t k = 0; k < patterns; ++k) {
    const ConfirmTables& c = p.confirms[k];
    bounds[k].reach = c.reach, bounds[k].shortest = c.shortest;
    std::copy(c.before, c.before + 4, bounds[k].before);
    tables.push_back(&c.nfa);
    words_each = std::max<uint64_t>(words_each, c.nfa.words);
  }
  const UploadedNfas nfas(tables, stream);
  const std::vector<DeviceNfa>& views = nfas.views();
  DeviceArray<ConfirmBounds> device_bounds(patterns);
  DeviceArray<DeviceNfa> device_nfas(patterns);
  DeviceArray<uint64_t> device_ends(ends.size()), device_first_end(patterns + 1);
  DeviceArray<uint64_t> range_count(patterns);
  DeviceArray<DeviceRange> ranges(ends.size());
  device_bounds.upload(bounds.data(), patterns, stream);
  device_nfas.upload(views.data(), patterns, stream);
  device_ends.upload(ends.data(), ends.size(), stream);
  device_first_end.upload(first_end.data(), patterns + 1, stream);
  PF_FSM_LAUNCH(find_start_ranges, blocks_for(patterns), kBlockThreads, stream, data, uint64_t(patterns),
                device_bounds.get(), device_ends.get(), device_first_end.get(), ranges.get(),
                range_count.get());
  // jobs of at most kRangesPerJob ranges each: a pattern of several jobs may find a match
  // twice (a job sweeps on past its last range while a thread lives), so its matches are
  // listed, sorted and made unique
  const std::vector<uint64_t> per_pattern = range_count.download(patterns, stream);
  std::vector<ConfirmJob> jobs;
  uint64_t total_ranges = 0;
  for (size_t k = 0; k < patterns; ++k) {
    total_ranges += per_pattern[k];
    for (uint64_t at = 0; at < per_pattern[k]; at += kRangesPerJob)
      jobs.push_back(ConfirmJob{k, at, std::min(kRangesPerJob, per_pattern[k] - at)});
  }
  reason += "; " + std::to_string(total_ranges) + " start ranges confirmed by " +
            std::to_string(patterns) + " NFAs in " + std::to_string(jobs.size()) +
            " jobs, one device thread each";
  if (jobs.empty()) return run;
  const bool split = jobs.size() > size_t(std::count_if(per_pattern.begin(), per_pattern.end(),
                                                        [](uint64_t r) { return r > 0; }));
  DeviceArray<ConfirmJob> device_jobs(jobs.size());
  device_jobs.upload(jobs.data(), jobs.size(), stream);
  DeviceArray<uint64_t> scratch(words_each > kNfaLocalWords ? jobs.size() * 2 * words_each : 1);
  DeviceArray<unsigned long long> counts(std::max<uint32_t>(tag_count, 1)), found(jobs.size());
  counts.zero(stream);
  const auto confirm = [&](unsigned long long* to_count, const unsigned long long* first,
                           Match* out) {
    with_set_width(uint32_t(words_each), [&](auto width) {
      PF_FSM_LAUNCH(confirm_jobs<decltype(width)::value>, blocks_for(jobs.size()), kBlockThreads,
                    stream, static_cast<const DeviceNfa*>(device_nfas.get()), data, uint64_t(n),
                    uint64_t(jobs.size()), static_cast<const ConfirmJob*>(device_jobs.get()),
                    static_cast<const DeviceRange*>(ranges.get()),
                    static_cast<const uint64_t*>(device_first_end.get()), scratch.get(),
                    words_each, to_count, found.get(), first, out);
    });
    PF_FSM_CUDA(cudaGetLastError());
  };
  confirm(counts.get(), nullptr, nullptr);
  if (!split) {
    const std::vector<unsigned long long> per_tag = counts.download(tag_count, stream);
    run.counts.assign(per_tag.begin(), per_tag.end());
    if (!options.matches) return run;
  }
  DeviceArray<unsigned long long> first(jobs.size() + 1);
  PF_FSM_LAUNCH(scan_counts, 1, kScanThreads, stream, found.get(), jobs.size(), first.get());
  const unsigned long long total = first.at(jobs.size(), stream);
  DeviceArray<Match> listed(total);
  confirm(nullptr, first.get(), listed.get());
  run.matches = listed.download(total, stream);
  if (split) {
    sort_matches(run.matches, true);
    for (const Match& match : run.matches) ++run.counts[match.tag];
    if (!options.matches) run.matches.clear();
  }
  return run;
}

}  // namespace parafuse::fsm::cuda
