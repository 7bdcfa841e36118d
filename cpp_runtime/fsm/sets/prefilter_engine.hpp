// parafuse boostfsm runtime: the prefiltered engine (fsm_compiler/engines/prefilter_engine.py).
// One pass of the literal DFA over the input gives (q, tag): the end of a factor of
// pattern `tag`. Under `auto` the pass runs in chunks that are exact from a lookback of
// the longest factor (fsm/sets/prefilter_literals.hpp); under any other scheme it runs that
// scheme (fsm/auto/choice.hpp, with matches). Each pattern's matches
// start in [first, q - shortest] of its hits, `first` the leftmost start from which the
// bytes up to q are all in `before`, at most `reach` bytes back and never before the
// previous range (they merge then); its NFA (fsm/sets/nfa_engine.hpp, stepped by the lazy DFA
// of fsm/sets/lazy_nfa.hpp) sweeps the
// merged start ranges: it injects new threads only inside a range, runs on while a
// thread lives, and jumps to the next range when none does. The hits of each chunk are
// taken in offset order (the chunks in parallel), each growing its pattern's ranges,
// then each pattern's parts are joined (a literal pattern's ends instead: no NFA), and
// its ranges are split into jobs run in parallel; a job may run past its last range into the next
// job's, so the matches are sorted and made unique at the end (each is exact). Its tables
// and blob: fsm/sets/prefilter_tables.hpp.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fsm/auto/choice.hpp"
#include "fsm/sets/entry_widths.hpp"
#include "fsm/sets/lazy_nfa.hpp"
#include "fsm/sets/nfa_engine.hpp"
#include "fsm/sets/prefilter_literals.hpp"
#include "fsm/sets/prefilter_tables.hpp"

namespace parafuse::fsm {
inline namespace v1 {

using StartRange = std::pair<uint64_t, uint64_t>;  // inclusive [first, last] match starts
constexpr size_t kPrefetchAhead = 4;  // ranges (or factor ends) ahead whose bytes are fetched

// The tight loop of confirm_sweep: cached steps from data[at] up to `stop` while they
// lead to live states, or to any state inside a range (`inject`), with report(state, at)
// where the state may accept; returns where it stopped. A function of its own so that its
// state stays in registers (inlined into confirm_sweep it lived on the stack, and
// uap-core's confirmation took 1.13x as long).
template <class Report>
[[gnu::noinline]] size_t sweep_cached(const int32_t* rows, const uint16_t* columns,
                                      const uint8_t* data, size_t at, size_t stop, bool inject,
                                      uint32_t& state, Report& report) {
  uint32_t current = state;
  while (at < stop) {
    const int32_t next = rows[current + columns[data[at]]];
    if (next < 0 || !(inject || (next & LazyNfa::kAlive))) break;  // no jump inside a range
    current = uint32_t(next) >> 2;
    ++at;
    if (next & LazyNfa::kMayAccept) report(current, at);
  }
  state = current;
  return at;
}

// The matches of one NFA that start in ranges[0, count) (sorted, disjoint), stepped by
// the lazy DFA of fsm/sets/lazy_nfa.hpp. Cached transitions (to live states, or to any state
// inside a range) take a tight loop up to the next range edge (the same `inject`
// throughout), reporting where a state's accept conditions hold. The step at an edge,
// an uncached one, and one into the empty set outside a range take the general path,
// which jumps to the next range when no thread lives. (The general path at every step,
// with one-word NFAs stepped bit-parallel and the empty set interned anew at each jump,
// takes twice the time on Nosey Parker.)
inline void confirm_sweep(const NfaTables& t, const uint8_t* data, size_t n,
                          const StartRange* ranges, size_t count, bool with_matches,
                          NfaChunk& out) {
  LazyNfa lazy(t);
  std::vector<uint32_t> tags;
  const auto category_before = [&](size_t at) {
    return at == 0 ? kPrevStart : unsigned(t.categories[data[at - 1]]);
  };
  const auto report = [&](uint32_t state, size_t at) {
    const uint64_t where = nfa_where(t, data, n, at);
    if (lazy.accepts(state, where))
      nfa_report(t, lazy.set(state), where, at, with_matches, tags, out);
  };
  size_t index = 0, at = ranges[0].first;
  uint32_t state = lazy.empty(category_before(at));  // the empty set reports nothing
  while (at < n) {
    bool inject = index < count && ranges[index].first <= at;
    const size_t edge = inject ? ranges[index].second + 1 : index < count ? ranges[index].first : n;
    const size_t stop = std::min(edge, n - 1);  // a last byte takes step(): it may be a final '\n'
    at = sweep_cached(lazy.rows(inject), lazy.columns(), data, at, stop, inject, state, report);
    while (index < count && ranges[index].second < at) ++index;
    inject = index < count && ranges[index].first <= at;
    state = lazy.step(state, data, n, at, inject);
    ++at;
    if (lazy.may_accept(state)) report(state, at);
    while (index < count && ranges[index].second < at) ++index;
    if (!lazy.alive(state) && !(index < count && ranges[index].first <= at)) {
      if (index == count) break;
      // The ranges lie far apart in the input: fetch the bytes of a later one meanwhile.
      if (index + kPrefetchAhead < count) {
        const uint64_t ahead = ranges[index + kPrefetchAhead].first;
        __builtin_prefetch(data + ahead - (ahead > 0));
      }
      at = ranges[index].first;
      state = lazy.empty(category_before(at));
    }
  }
}

// Adds the start range of the factor end q to the pattern's merged ranges (its factor
// ends taken in offset order), unless its guards fail.
inline void add_start_range(const ConfirmTables& c, const uint8_t* data, size_t n, uint64_t q,
                            std::vector<StartRange>& list) {
  if (!c.guards_pass(data, n, q)) return;  // no match starts from here
  uint64_t lower = q > c.reach ? q - c.reach : 0;
  if (!list.empty()) lower = std::max(lower, list.back().second + 1);
  uint64_t first = q;
  if (c.only_not_before >= 0)  // `.` before the factor: back to the newline (memrchr)
    first = uint64_t(last_byte_at(data, int64_t(lower), int64_t(q), c.only_not_before) + 1);
  else
    while (first > lower && c.may_precede(data[first - 1])) --first;
  const uint64_t last = q - c.shortest;
  if (!list.empty() && first <= list.back().second + 1)
    list.back().second = last;
  else
    list.push_back({first, last});
}

// Appends the ranges a pattern's later factor ends made (found apart: the first may
// touch or overlap the last of `list`, and then joins it).
inline void append_ranges(std::vector<StartRange>& list, const std::vector<StartRange>& later) {
  size_t from = 0;
  if (!list.empty() && !later.empty() && later[0].first <= list.back().second + 1) {
    list.back().second = std::max(list.back().second, later[0].second);
    from = 1;
  }
  list.insert(list.end(), later.begin() + ptrdiff_t(from), later.end());
}

// Where literal patterns confirmed together end from the factor end q: each string s
// compared ending at q + after(s); `found`: one list of ends per pattern.
inline void add_literal_ends(const std::vector<LiteralPattern>& patterns, const uint8_t* data,
                             uint64_t n, uint64_t q, std::vector<std::vector<uint64_t>>& found) {
  found.resize(patterns.size());
  for (size_t m = 0; m < patterns.size(); ++m)
    for (const LiteralString& s : patterns[m].strings) {
      const uint64_t e = q + s.after, length = s.sets.size() / 4;
      if (e > n || e < length || !Guard::ends_at_string(s.sets, data, e)) continue;
      if (found[m].empty() || found[m].back() != e) found[m].push_back(e);
    }
}

struct LiteralMatches {
  std::vector<std::pair<uint32_t, uint64_t>> counts;  // (tag, matches)
  std::vector<Match> matches;  // with_matches only
};

// The matches of literal patterns from the ends found over each stretch of the input (in
// order; a string that ends another may be found from two factor ends, and out of order):
// sorted, each end once.
inline void literal_matches(const std::vector<LiteralPattern>& patterns,
                            const std::vector<const std::vector<std::vector<uint64_t>>*>& parts,
                            bool with_matches, LiteralMatches& out) {
  std::vector<uint64_t> ends;
  for (size_t m = 0; m < patterns.size(); ++m) {
    ends.clear();
    for (const auto* part : parts)
      if (m < part->size()) ends.insert(ends.end(), (*part)[m].begin(), (*part)[m].end());
    if (!std::is_sorted(ends.begin(), ends.end())) std::sort(ends.begin(), ends.end());
    ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
    out.counts.emplace_back(patterns[m].tag, ends.size());
    if (with_matches)
      for (uint64_t e : ends) out.matches.push_back(Match{e, patterns[m].tag});
  }
}

// Lists of ranges (one per pattern a part) the ranges phase may hold in all, where that
// allows more than kLanes parts a thread.
constexpr size_t kRangeLists = 65536;

struct PrefilterResult {
  std::vector<PhaseTiming> phases;  // the literal DFA's, then "ranges", "confirm", "merge"
  std::vector<uint64_t> counts;
  std::vector<Match> matches;
  std::string scheme, reason;
};

struct ConfirmJob {
  size_t pattern, begin, end;  // ranges[pattern][begin, end)
};

// Widths: the entry widths the literal DFA may have (fsm/sets/entry_widths.hpp).
template <class Widths = AllEntryWidths>
PrefilterResult run_prefilter(const PrefilterTables& p, const uint8_t* data, size_t n,
                              uint32_t tag_count, const RunOptions& options, int threads,
                              size_t chunks) {
  PrefilterResult result;
  const size_t patterns = p.confirms.size();
  std::vector<uint32_t> confirm_of(tag_count, 0);  // a tag's pattern
  for (size_t k = 0; k < patterns; ++k) confirm_of[p.confirms[k].tag] = uint32_t(k);
  std::vector<std::vector<uint64_t>> hits;  // factor ends by offset, in lists one after another
  if (scheme_named(options.scheme) == Scheme::automatic) {
    const double began = omp_get_wtime();
    std::vector<double> units;
    const size_t groups = std::max(size_t(threads), (chunks + kLiteralLanes - 1) / kLiteralLanes);
    hits = literal_hits(p.literals, data, n, p.longest - 1, groups, threads, confirm_of, units);
    if (options.profile)
      result.phases.push_back(PhaseTiming{"literals chunks", true, omp_get_wtime() - began, units});
    result.scheme = "lookback";
    result.reason = "literal DFA in " + std::to_string(hits.size()) + " chunks, each exact from " +
                    std::to_string(p.longest - 1) + " bytes of lookback (factors of at most " +
                    std::to_string(p.longest) + " bytes)";
  } else {
    RunOptions literal_options = options;
    literal_options.matches = true;
    RunResult run = Widths::run(p.literals, data, n, literal_options);
    result.phases = run.phases;
    for (PhaseTiming& phase : result.phases) phase.name = "literals " + phase.name;
    result.scheme = run.scheme;
    result.reason = "literal DFA (" + run.scheme + ": " + run.reason + ")";
    hits.emplace_back();
    for (const Match& hit : run.matches)
      hits[0].push_back(hit.offset << kHitPatternBits | confirm_of[hit.tag]);
  }
  double began = omp_get_wtime();
  // Each part's factor ends (consecutive chunks' lists) in offset order, each one's
  // pattern's ranges (or literal ends) growing; then each pattern's parts joined, part
  // after part. Each part holds two lists per pattern: at most kLanes parts a thread, or
  // kRangeLists lists in all where that allows more (a run of many chunks).
  const uint64_t pattern_mask = (uint64_t(1) << kHitPatternBits) - 1;
  size_t factor_ends = 0;
  for (const auto& list : hits) factor_ends += list.size();
  const size_t part_count = std::min(
      hits.size(), std::max(size_t(threads) * kLanes, kRangeLists / std::max<size_t>(1, patterns)));
  std::vector<std::vector<std::vector<StartRange>>> part_ranges(
      part_count, std::vector<std::vector<StartRange>>(patterns));
  std::vector<std::vector<std::vector<std::vector<uint64_t>>>> part_literals(
      part_count, std::vector<std::vector<std::vector<uint64_t>>>(patterns));
  std::vector<double> range_units(part_count);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (size_t part = 0; part < part_count; ++part) {
    const double part_began = omp_get_wtime();
    const size_t lists = hits.size();
    for (size_t list = lists * part / part_count; list < lists * (part + 1) / part_count; ++list)
      for (const uint64_t hit : hits[list]) {
        const size_t k = size_t(hit & pattern_mask);
        const uint64_t q = hit >> kHitPatternBits;
        const ConfirmTables& c = p.confirms[k];
        if (!c.literals.empty())
          add_literal_ends(c.literals, data, n, q, part_literals[part][k]);
        else
          add_start_range(c, data, n, q, part_ranges[part][k]);
      }
    range_units[part] = omp_get_wtime() - part_began;
  }
  hits.clear();
  std::vector<std::vector<StartRange>> ranges(patterns);
  std::vector<LiteralMatches> literal(patterns);  // of literal patterns, exact
#pragma omp parallel for num_threads(threads) schedule(dynamic, 16)
  for (size_t k = 0; k < patterns; ++k) {
    if (!p.confirms[k].literals.empty()) {
      std::vector<const std::vector<std::vector<uint64_t>>*> found_parts;
      for (const auto& found : part_literals) found_parts.push_back(&found[k]);
      literal_matches(p.confirms[k].literals, found_parts, options.matches, literal[k]);
    } else {
      for (auto& found : part_ranges) {
        append_ranges(ranges[k], found[k]);
        std::vector<StartRange>().swap(found[k]);
      }
    }
  }
  size_t total = 0, literal_patterns = 0;
  for (const auto& list : ranges) total += list.size();
  for (const ConfirmTables& c : p.confirms) literal_patterns += !c.literals.empty();
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
  // Matches are listed when asked for, or to remove the duplicates of split patterns.
  const bool listed = options.matches || jobs_per_pattern > 1;
  std::vector<NfaChunk> parts(jobs.size());
  std::vector<double> units(jobs.size());
  if (options.profile)
    result.phases.push_back(PhaseTiming{"ranges", true, omp_get_wtime() - began, range_units});
  began = omp_get_wtime();
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (size_t j = 0; j < jobs.size(); ++j) {
    const double job_began = omp_get_wtime();
    const ConfirmJob& job = jobs[j];
    const NfaTables& t = p.confirms[job.pattern].nfa;
    const StartRange* first = ranges[job.pattern].data() + job.begin;
    const size_t count = job.end - job.begin;
    parts[j].counts.assign(tag_count, 0);
    confirm_sweep(t, data, n, first, count, listed, parts[j]);
    units[j] = omp_get_wtime() - job_began;
  }
  if (options.profile)
    result.phases.push_back(PhaseTiming{"confirm", true, omp_get_wtime() - began, units});
  began = omp_get_wtime();
  result.counts.assign(tag_count, 0);
  if (!listed) {  // one job a pattern: each (offset, tag) was counted once
    for (const NfaChunk& part : parts)
      for (uint32_t tag = 0; tag < tag_count; ++tag) result.counts[tag] += part.counts[tag];
  } else {
    for (const NfaChunk& part : parts)
      result.matches.insert(result.matches.end(), part.matches.begin(), part.matches.end());
    for (const LiteralMatches& found : literal)  // listed when asked for
      result.matches.insert(result.matches.end(), found.matches.begin(), found.matches.end());
    sort_matches(result.matches, true);
    for (const Match& match : result.matches) ++result.counts[match.tag];
  }
  if (!options.matches)
    for (const LiteralMatches& found : literal)
      for (const auto& [tag, count] : found.counts) result.counts[tag] += count;
  if (options.profile) result.phases.push_back(PhaseTiming{"merge", false, omp_get_wtime() - began, {}});
  result.reason += " found " + std::to_string(factor_ends) + " factor ends; " +
                  std::to_string(total) + " start ranges confirmed by " +
                  std::to_string(p.confirms.size() - literal_patterns) + " NFAs in " +
                  std::to_string(jobs.size()) + " jobs; " + std::to_string(literal_patterns) +
                  " literal patterns compared at their factor ends";
  return result;
}

}  // namespace v1
}  // namespace parafuse::fsm
