// parafuse boostfsm runtime: the NFA engine's runs (fsm/sets/nfa_engine.hpp) on a lazy DFA
// over its position sets, as
// RE2 and regex-automata build one: a DFA state is a set of NFA positions together with
// the category of the last byte (which decides every assertion with the next byte's).
// States and transitions are made when first needed and cached; a transition is then one
// table load instead of a bit-parallel step over every word of the set. The cache is
// bounded: past kLazyStates states it is emptied and refilled from the current state.
// Transitions are keyed by (state, inject, byte class: bytes of the same category and
// positions); a step whose byte is a final '\n'
// (its next category is FINAL_NEWLINE, not NEWLINE) is computed without the cache.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "fsm/sets/nfa_engine.hpp"

namespace parafuse::fsm {
inline namespace v1 {

constexpr uint32_t kLazyStates = 2048;
constexpr int32_t kLazyUnknown = -1;
static_assert(kLazyStates * 512 * 4 <= (uint64_t(1) << 31), "a packed transition fits int32_t");

class LazyNfa {
 public:
  explicit LazyNfa(const NfaTables& t)
      : t_(t), words_(t.words), scratch_(2 * t.words, 0), column_(t.byte_column.data()) {
    while (half_ < t.columns) half_ *= 2, ++shift_;
    // Room for a full cache from the start: growing would copy every row made so far
    // (untouched room costs no memory).
    next_.reserve(size_t(kLazyStates) * 2 * half_);
    sets_.reserve(size_t(kLazyStates) * words_);
  }

  // States are handles: a state's number times its row of next_ (2 x half_ entries, a
  // power of two), so a cached step is a load, a shift and an add.
  // The empty set after a byte of category `prev` (kPrevStart: at the start).
  // Kept per category until the cache is emptied: a sweep starts from it at every range.
  uint32_t empty(unsigned prev) {
    if (prev >= kCategories) return intern(nullptr, prev) << shift_;
    if (empty_[prev] == kLazyUnknown) empty_[prev] = int32_t(intern(nullptr, prev) << shift_);
    return uint32_t(empty_[prev]);
  }
  static constexpr uint8_t kAlive = 1, kMayAccept = 2;
  bool alive(uint32_t state) const { return flags_[state >> shift_] & kAlive; }
  bool may_accept(uint32_t state) const { return flags_[state >> shift_] & kMayAccept; }
  // Whether `state` reports a tag at a boundary of condition `where` (nfa_where).
  bool accepts(uint32_t state, uint64_t where) const {
    return accepts_where_[state >> shift_] & where;
  }
  const uint64_t* set(uint32_t state) const {
    return sets_.data() + size_t(state >> shift_) * words_;
  }

  // The cached transitions: rows(inject)[state + columns()[byte]] is, for `byte` (not a
  // final '\n'), the next state << 2 | its flags (kAlive, kMayAccept), or kLazyUnknown
  // when not made yet. Valid for the life of the object (room for a full cache is
  // reserved up front, and emptying it keeps the room), so a loop may keep the pointers.
  const int32_t* rows(bool inject) const { return next_.data() + (inject ? half_ : 0); }
  const uint16_t* columns() const { return column_; }

  // The state after data[at] (at < n); new threads start there only when `inject`. May
  // empty the cache: every state number from before is then void except the result.
  uint32_t step(uint32_t state, const uint8_t* data, size_t n, size_t at, bool inject) {
    const uint8_t byte = data[at];
    const bool final_newline = byte == '\n' && at + 1 == n;
    const size_t slot = state + (inject ? half_ : 0) + column_[byte];
    if (!final_newline && next_[slot] != kLazyUnknown) return uint32_t(next_[slot]) >> 2;
    const uint64_t where = nfa_where(t_, data, n, at);
    uint64_t* out = scratch_.data();
    uint64_t* cand = scratch_.data() + words_;
    std::memcpy(out, set(state), 8 * words_);
    nfa_step<0>(t_, out, cand, t_.byte_positions + size_t(byte) * words_, where, alive(state),
                inject);
    const size_t before = prev_.size();
    const uint32_t id = intern(out, t_.categories[byte]);
    if (prev_.size() < before) return id << shift_;  // the cache was emptied: no slot to fill
    if (!final_newline) next_[slot] = int32_t((id << shift_) << 2 | flags_[id]);
    return id << shift_;
  }

 private:
  uint32_t intern(const uint64_t* positions, unsigned prev) {
    std::string key(reinterpret_cast<const char*>(&prev), sizeof prev);
    if (positions)
      key.append(reinterpret_cast<const char*>(positions), 8 * words_);
    else
      key.append(8 * words_, '\0');
    if (auto found = ids_.find(key); found != ids_.end()) return found->second;
    if (prev_.size() >= kLazyStates) clear();
    const uint32_t id = uint32_t(prev_.size());
    ids_.emplace(std::move(key), id);
    prev_.push_back(prev);
    const size_t offset = sets_.size();
    sets_.resize(offset + words_, 0);
    if (positions) std::memcpy(sets_.data() + offset, positions, 8 * words_);
    bool any = false;
    for (size_t w = 0; w < words_; ++w) any |= sets_[offset + w] != 0;
    const uint64_t conditions = any ? accept_conditions(t_, sets_.data() + offset) : 0;
    accepts_where_.push_back(conditions);
    flags_.push_back(uint8_t((any ? kAlive : 0) | (conditions ? kMayAccept : 0)));
    next_.resize(next_.size() + 2 * half_, kLazyUnknown);
    return id;
  }

  void clear() {
    ids_.clear();
    prev_.clear();
    sets_.clear();
    flags_.clear();
    accepts_where_.clear();
    std::fill(std::begin(empty_), std::end(empty_), kLazyUnknown);
    next_.clear();
  }

  const NfaTables& t_;
  size_t words_;
  std::vector<uint64_t> scratch_;
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<unsigned> prev_;
  std::vector<uint64_t> sets_;
  static constexpr unsigned kCategories = 8;
  std::vector<uint8_t> flags_;
  std::vector<uint64_t> accepts_where_;  // accept_conditions() of each state
  int32_t empty_[kCategories] = {kLazyUnknown, kLazyUnknown, kLazyUnknown, kLazyUnknown,
                                 kLazyUnknown, kLazyUnknown, kLazyUnknown, kLazyUnknown};
  const uint16_t* column_;  // [256]: the byte's column (NfaTables::byte_column)
  uint32_t half_ = 1, shift_ = 1;  // columns padded to a power of two; log2(2 * half_)
  std::vector<int32_t> next_;  // [state][inject][column_[byte]]: rows(), packed
};

// The plain bit-parallel step behind LazyNfa's interface (one state, numbered 0): for
// NFAs of one word, where a step costs less than a cache lookup, and where sets are too
// varied to cache (`[a-q][^u-z]{13}x` has thousands).
class DirectNfa {
 public:
  explicit DirectNfa(const NfaTables& t) : t_(t), state_(t.words, 0), cand_(t.words, 0) {}
  uint32_t empty(unsigned) {
    std::fill(state_.begin(), state_.end(), 0);
    alive_ = false;
    return 0;
  }
  bool alive(uint32_t) const { return alive_; }
  bool may_accept(uint32_t) const { return alive_ && intersects(state_.data(), t_.accepting_mask); }
  const uint64_t* set(uint32_t) const { return state_.data(); }
  uint32_t step(uint32_t, const uint8_t* data, size_t n, size_t at, bool inject) {
    const uint64_t* positions = t_.byte_positions + size_t(data[at]) * t_.words;
    const uint64_t where = nfa_where(t_, data, n, at);
    alive_ = t_.words == 1 ? nfa_step<1>(t_, state_.data(), cand_.data(), positions, where, alive_, inject)
                           : nfa_step<0>(t_, state_.data(), cand_.data(), positions, where, alive_, inject);
    return 0;
  }

 private:
  const NfaTables& t_;
  std::vector<uint64_t> state_, cand_;
  bool alive_ = false;
};

// Whether runs of `t` step a LazyNfa (else a DirectNfa): a one-word step is cheaper
// than a cache lookup.
inline bool use_lazy(const NfaTables& t) { return t.words > 1; }

// Reports at the boundaries j in [begin, end) (and at n when end == n), scanned from
// `scan` with an empty state (new threads start at every boundary).
template <class Stepper>
void nfa_scan_with(const NfaTables& t, const uint8_t* data, size_t n, size_t scan,
                   size_t begin, size_t end, bool with_matches, NfaChunk& out) {
  Stepper lazy(t);
  std::vector<uint32_t> tags;
  uint32_t state = lazy.empty(scan == 0 ? kPrevStart : unsigned(t.categories[data[scan - 1]]));
  const size_t last = end == n ? n + 1 : end;
  for (size_t at = scan; at < last; ++at) {
    if (at >= begin && (lazy.may_accept(state) || t.empty_accepts))
      nfa_report(t, lazy.set(state), nfa_where(t, data, n, at), at, with_matches, tags, out);
    if (at == n) break;
    if (t.starts_at_zero_only && at > 0 && !lazy.alive(state)) break;  // none can start again
    state = lazy.step(state, data, n, at, true);
  }
}

inline void nfa_scan(const NfaTables& t, const uint8_t* data, size_t n, size_t scan,
                     size_t begin, size_t end, bool with_matches, NfaChunk& out) {
  if (use_lazy(t))
    nfa_scan_with<LazyNfa>(t, data, n, scan, begin, end, with_matches, out);
  else
    nfa_scan_with<DirectNfa>(t, data, n, scan, begin, end, with_matches, out);
}

// An engine whose matches are at most `max_length` bytes long runs its chunks in
// parallel, each from `max_length` bytes before the chunk with an empty state: every
// chunk starts exactly. An unbounded engine runs one chunk.
struct NfaResult {
  std::vector<uint64_t> counts;
  std::vector<Match> matches;
  size_t chunks = 1;
  double seconds = 0;          // the whole run
  std::vector<double> units;   // each chunk's seconds
};

// Runs the engine over data[0, n) in `chunks` chunks (one when unbounded).
inline NfaResult run_nfa(const NfaTables& t, const uint8_t* data, size_t n, uint32_t tag_count,
                         int threads, size_t chunks, bool with_matches) {
  if (!t.bounded() || n == 0) chunks = 1;
  chunks = std::max<size_t>(1, std::min(chunks, n));  // chunk c reports at [begin, end)
  std::vector<NfaChunk> parts(chunks);
  std::vector<double> units(chunks);
  const double began = omp_get_wtime();
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (size_t c = 0; c < chunks; ++c) {
    const double chunk_began = omp_get_wtime();
    const size_t begin = n * c / chunks, end = n * (c + 1) / chunks;
    const size_t scan = t.bounded() ? (begin > t.max_length ? begin - t.max_length : 0) : 0;
    NfaChunk& part = parts[c];
    part.counts.assign(tag_count, 0);
    nfa_scan(t, data, n, scan, begin, end, with_matches, part);
    units[c] = omp_get_wtime() - chunk_began;
  }
  NfaResult result;
  result.seconds = omp_get_wtime() - began;
  result.units = std::move(units);
  result.chunks = chunks;
  result.counts.assign(tag_count, 0);
  for (const NfaChunk& part : parts) {
    for (uint32_t tag = 0; tag < tag_count; ++tag) result.counts[tag] += part.counts[tag];
    result.matches.insert(result.matches.end(), part.matches.begin(), part.matches.end());
  }
  return result;
}

}  // namespace v1
}  // namespace parafuse::fsm
