// parafuse boostfsm runtime: the prefiltered engine (fsm_compiler/prefilter_engine.py).
// One pass of the literal DFA over the input (any scheme of fsm/auto_choice.hpp, with
// matches) gives (q, tag): the end of a factor of pattern `tag`. Each pattern's matches
// start in [first, q - shortest] of its hits, `first` the leftmost start from which the
// bytes up to q are all in `before`, at most `reach` bytes back and never before the
// previous range (they merge then); its NFA (fsm/nfa_engine.hpp, stepped by the lazy DFA
// of fsm/lazy_nfa.hpp) sweeps the
// merged start ranges: it injects new threads only inside a range, runs on while a
// thread lives, and jumps to the next range when none does. The ranges of a pattern are
// split into jobs run in parallel; a job may run past its last range into the next
// job's, so the matches are sorted and made unique at the end (each is exact).
//
// Blob (emitters/fsm/engine_set_blob.py): u64 magic "PFSMPRE1", pattern count P,
// literal DFA offset and size, then P x (tag, reach (all ones: unbounded), shortest, NFA
// offset, NFA size, before[4]); offsets from the engine blob's start, 64-byte aligned.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fsm/auto_choice.hpp"
#include "fsm/lazy_nfa.hpp"
#include "fsm/nfa_engine.hpp"

namespace parafuse::fsm {
inline namespace v1 {

constexpr uint64_t kPrefilterMagic = 0x314552504d534650ull;  // "PFSMPRE1"

constexpr size_t kConfirmSlots = 9;

struct ConfirmTables {
  uint32_t tag = 0;
  uint64_t reach = 0, shortest = 0;  // reach all ones: unbounded
  uint64_t before[4] = {0, 0, 0, 0};  // byte set
  NfaTables nfa;
  bool may_precede(uint8_t byte) const { return (before[byte >> 6] >> (byte & 63)) & 1; }
};

struct PrefilterTables {
  Tables literals;
  std::vector<ConfirmTables> confirms;
};

inline PrefilterTables parse_prefilter(const uint8_t* blob, size_t size) {
  const uint64_t* slots = reinterpret_cast<const uint64_t*>(blob);
  if (size < 32 || slots[0] != kPrefilterMagic)
    throw std::runtime_error("not a parafuse prefilter blob");
  const uint64_t count = slots[1];
  if (size < 32 + 8 * kConfirmSlots * count) throw std::runtime_error("prefilter blob: truncated");
  const auto part = [&](uint64_t offset, uint64_t bytes) {
    if (offset > size || bytes > size - offset) throw std::runtime_error("prefilter blob: corrupt");
    return blob + offset;
  };
  PrefilterTables p;
  p.literals = parse_tables(part(slots[2], slots[3]), slots[3]);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t* entry = slots + 4 + kConfirmSlots * i;
    ConfirmTables c;
    c.tag = uint32_t(entry[0]);
    c.reach = entry[1];
    c.shortest = entry[2];
    std::copy(entry + 5, entry + 9, c.before);
    c.nfa = parse_nfa(part(entry[3], entry[4]), entry[4]);
    if (c.nfa.empty_accepts || c.shortest == 0 || c.shortest > c.reach)
      throw std::runtime_error("prefilter blob: a pattern without a factor");
    p.confirms.push_back(c);
  }
  return p;
}

using StartRange = std::pair<uint64_t, uint64_t>;  // inclusive [first, last] match starts

// The matches of one NFA that start in ranges[0, count) (sorted, disjoint), stepped by
// a lazy DFA over its position sets, or bit-parallel for one word (fsm/lazy_nfa.hpp).
template <class Stepper>
void confirm_sweep_with(const NfaTables& t, const uint8_t* data, size_t n,
                        const StartRange* ranges, size_t count, NfaChunk& out) {
  Stepper lazy(t);
  std::vector<uint32_t> tags;
  const auto category_before = [&](size_t at) {
    return at == 0 ? kPrevStart : unsigned(t.categories[data[at - 1]]);
  };
  size_t index = 0, at = ranges[0].first;
  uint32_t state = lazy.empty(category_before(at));
  for (;;) {
    if (lazy.may_accept(state))
      nfa_report(t, lazy.set(state), nfa_where(t, data, n, at), at, true, tags, out);
    if (at == n) break;
    const bool inject = index < count && ranges[index].first <= at;
    state = lazy.step(state, data, n, at, inject);
    ++at;
    while (index < count && ranges[index].second < at) ++index;
    if (!lazy.alive(state) && !(index < count && ranges[index].first <= at)) {
      if (index == count) break;
      at = ranges[index].first;
      state = lazy.empty(category_before(at));
    }
  }
}

struct PrefilterResult {
  std::vector<PhaseTiming> phases;  // the literal DFA's, then "ranges", "confirm", "merge"
  std::vector<uint64_t> counts;
  std::vector<Match> matches;
  std::string scheme, reason;
};

struct ConfirmJob {
  size_t pattern, begin, end;  // ranges[pattern][begin, end)
};

inline PrefilterResult run_prefilter(const PrefilterTables& p, const uint8_t* data, size_t n,
                                     uint32_t tag_count, const RunOptions& options, int threads,
                                     size_t chunks) {
  RunOptions literal_options = options;
  literal_options.matches = true;
  const RunResult hits = run_machine(p.literals, data, n, literal_options);
  PrefilterResult result;
  result.phases = hits.phases;
  for (PhaseTiming& phase : result.phases) phase.name = "literals " + phase.name;
  double began = omp_get_wtime();
  std::vector<int> confirm_of(tag_count, -1);
  for (size_t k = 0; k < p.confirms.size(); ++k) confirm_of[p.confirms[k].tag] = int(k);
  std::vector<std::vector<StartRange>> ranges(p.confirms.size());
  for (const Match& hit : hits.matches) {  // by offset: each pattern's ranges come sorted
    const ConfirmTables& c = p.confirms[size_t(confirm_of[hit.tag])];
    std::vector<StartRange>& list = ranges[size_t(confirm_of[hit.tag])];
    uint64_t lower = hit.offset > c.reach ? hit.offset - c.reach : 0;
    if (!list.empty()) lower = std::max(lower, list.back().second + 1);
    uint64_t first = hit.offset;
    while (first > lower && c.may_precede(data[first - 1])) --first;
    const uint64_t last = hit.offset - c.shortest;
    if (!list.empty() && first <= list.back().second + 1)
      list.back().second = last;
    else
      list.push_back({first, last});
  }
  size_t total = 0;
  for (const auto& list : ranges) total += list.size();
  // kLanes jobs a thread in all, a pattern's ranges split only when patterns are fewer,
  // and never more than `chunks` parts: a job runs on past its last range while a thread
  // lives (to the end under `(?s).*`), so more jobs could cost more than they share.
  size_t active = 0;
  for (const auto& list : ranges) active += !list.empty();
  const size_t target = size_t(threads) * kLanes;
  const size_t jobs_per_pattern =
      std::max<size_t>(1, std::min(chunks, (target + std::max<size_t>(1, active) - 1) /
                                               std::max<size_t>(1, active)));
  std::vector<ConfirmJob> jobs;
  for (size_t k = 0; k < ranges.size(); ++k)
    for (size_t part = 0, size = ranges[k].size(), parts = std::min(size, jobs_per_pattern);
         part < parts; ++part)
      jobs.push_back({k, size * part / parts, size * (part + 1) / parts});
  std::vector<NfaChunk> parts(jobs.size());
  std::vector<double> units(jobs.size());
  if (options.profile) result.phases.push_back(PhaseTiming{"ranges", false, omp_get_wtime() - began, {}});
  began = omp_get_wtime();
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (size_t j = 0; j < jobs.size(); ++j) {
    const double job_began = omp_get_wtime();
    const ConfirmJob& job = jobs[j];
    const NfaTables& t = p.confirms[job.pattern].nfa;
    const StartRange* first = ranges[job.pattern].data() + job.begin;
    const size_t count = job.end - job.begin;
    parts[j].counts.assign(tag_count, 0);
    if (use_lazy(t))
      confirm_sweep_with<LazyNfa>(t, data, n, first, count, parts[j]);
    else
      confirm_sweep_with<DirectNfa>(t, data, n, first, count, parts[j]);
    units[j] = omp_get_wtime() - job_began;
  }
  if (options.profile)
    result.phases.push_back(PhaseTiming{"confirm", true, omp_get_wtime() - began, units});
  began = omp_get_wtime();
  for (const NfaChunk& part : parts)
    result.matches.insert(result.matches.end(), part.matches.begin(), part.matches.end());
  std::sort(result.matches.begin(), result.matches.end(), [](const Match& a, const Match& b) {
    return a.offset != b.offset ? a.offset < b.offset : a.tag < b.tag;
  });
  result.matches.erase(std::unique(result.matches.begin(), result.matches.end(),
                                   [](const Match& a, const Match& b) {
                                     return a.offset == b.offset && a.tag == b.tag;
                                   }),
                       result.matches.end());
  result.counts.assign(tag_count, 0);
  for (const Match& match : result.matches) ++result.counts[match.tag];
  if (options.profile) result.phases.push_back(PhaseTiming{"merge", false, omp_get_wtime() - began, {}});
  result.scheme = hits.scheme;
  result.reason = "literal DFA (" + hits.scheme + ": " + hits.reason + ") found " +
                  std::to_string(hits.matches.size()) + " factor ends; " +
                  std::to_string(total) + " start ranges confirmed by " +
                  std::to_string(p.confirms.size()) + " NFAs in " + std::to_string(jobs.size()) +
                  " jobs";
  return result;
}

}  // namespace v1
}  // namespace parafuse::fsm
