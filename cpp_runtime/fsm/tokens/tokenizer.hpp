// parafuse boostfsm runtime: the sequential maximal-munch tokenizer of a token set
// (docs/fsm-language.md section 5; design in docs/fsm.md).
//
// A token at p: run the DFA from p until it dies (or the input ends), remembering the
// last accepting state; the token ends there. Where no rule matches at p, one `error`
// token runs to the next position where some rule matches.
//
// Backing up re-reads bytes. When a rule set has a cycle of live non-accepting states
// (a comment or string that may never close) the re-reading is unbounded, and a naive
// tokenizer is quadratic (each of n positions scanning to the end). Tokenizer then keeps
// Reps' memo ("Maximal-munch tokenization in linear time", TOPLAS 1998): after a scan
// that read past its last accept, every (position, loop state) it met there is recorded
// as failed, and a later scan that meets one stops at once. Each pair fails once, so the
// work is linear. Only every 32nd position is recorded (a scan that has fallen onto a
// failed path meets a record within 32 bytes), which keeps the memo small when one
// unterminated comment fails over the whole input. The memo is consulted only below the
// highest failed position, so inputs that never back up far pay nothing for it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_set>

#include "fsm/tokens/tables.hpp"

namespace parafuse::fsm {
inline namespace v1 {

// One token: bytes [start, end) of kind `kind` (an index of kind_name). 24 bytes, the
// layout of the Python module's numpy records (start u64, end u64, kind u16). The empty
// constructor leaves it uninitialised, so that sizing a list writes no zeros first.
struct Token {
  uint64_t start;
  uint64_t end;
  uint16_t kind;
  Token() {}  // NOLINT: deliberately uninitialised
  Token(uint64_t start_, uint64_t end_, uint16_t kind_) : start(start_), end(end_), kind(kind_) {}
};

constexpr uint16_t kSkipToken = 0xFFFF;  // kind of a skip rule's token inside the runtime
constexpr size_t kMemoMinBackup = 16;    // shorter back-ups are cheap to re-read
constexpr size_t kMemoStride = 32;       // failures are recorded at every 32nd position

class Tokenizer {
 public:
  Tokenizer(const TokenTables& tables, const uint8_t* data, size_t n)
      : t_(tables), data_(data), n_(n) {}

  // The token starting at p < n: fills `token` (kind kSkipToken for a skip rule) and
  // returns its end. Inlined: one scan, no memo consulted and none to record; anything
  // else (no rule matches, a memo, a long back-up) goes the general way, which scans again.
  __attribute__((always_inline)) size_t next_token(size_t p, Token& token) {
    if (p != cached_at_ && memo_.empty()) {
      size_t best = p;
      uint32_t best_state = t_.start;
      const size_t stop = scan<false>(p, best, best_state);
      if (best > p && (!t_.needs_memo || stop - best < kMemoMinBackup)) {
        const int32_t kind = t_.accept[best_state >> t_.shift];
        token = Token{p, best, kind == kSkipKind ? kSkipToken : uint16_t(kind)};
        return best;
      }
    }
    return next_token_general(p, token);
  }

 private:
  __attribute__((noinline)) size_t next_token_general(size_t p, Token& token) {
    int32_t kind;
    size_t end = longest(p, kind);
    if (end > p) {
      token = Token{p, end, kind == kSkipKind ? kSkipToken : uint16_t(kind)};
      return end;
    }
    end = p + 1;
    while (end < n_ && longest(end, kind) == end) ++end;
    token = Token{p, end, t_.error_kind()};
    return end;
  }

  // End of the longest match at p (p itself when none) and its kind.
  size_t longest(size_t p, int32_t& kind) {
    if (p == cached_at_) {
      kind = cached_kind_;
      return cached_end_;
    }
    if (p >= memo_high_ && !memo_.empty()) memo_.clear();
    uint32_t best_state = t_.start;
    size_t best = p;
    const size_t i = memo_.empty() ? scan<false>(p, best, best_state)
                                   : scan<true>(p, best, best_state);
    kind = kNoKind;
    if (best > p) kind = t_.accept[best_state >> t_.shift];
    if (t_.needs_memo && i - best >= kMemoMinBackup) remember_failure(best, best_state, i);
    cached_at_ = p, cached_end_ = best, cached_kind_ = kind;
    return best;
  }

  // Run the DFA from p until it dies, the input ends or (kMemo) a failed pair is met;
  // `best`/`best_state`: the last accepting position and state. Returns where it stopped.
  // Without a memo, a state's self-loop is passed over at once (fsm/tokens/accel.hpp).
  template <bool kMemo>
  size_t scan(size_t p, size_t& best_out, uint32_t& best_state_out) const {
    size_t best = best_out;
    uint32_t best_state = best_state_out;
    const uint8_t* const data = data_;
    const uint32_t* const next = t_.next;
    const uint8_t* const byte_class = t_.byte_class;
    const uint32_t floor = t_.accept_floor, dead = t_.dead;
    const uint32_t loop_low = t_.loop_low, loop_span = t_.loop_high - t_.loop_low;
    uint32_t state = t_.start;
    size_t i = p;
    while (i < n_) {
      state = next[state + byte_class[data[i]]];
      ++i;
      // (with a memo, no skip: failed positions are checked at every 32nd byte)
      if (!kMemo && state - loop_low < loop_span) {
        const uint8_t loop = t_.self_loop[state >> t_.shift];
        if (loop == kLoopScan) {
          while (i < n_ && next[state + byte_class[data[i]]] == state) ++i;
        } else if (loop == kLoopFind) {
          i = find_exit(data, i, n_, t_.self_loop_exits[state >> t_.shift]);
        } else if (loop == kLoopEnd) {
          i = n_;
        }
      }
      if (state >= floor) {
        best = i;
        best_state = state;
      } else if (state == dead) {
        break;
      } else if (kMemo && i % kMemoStride == 0 && i < memo_high_ &&
                 t_.loop[state >> t_.shift] && memo_.count(key(i, state))) {
        break;
      }
    }
    best_out = best;
    best_state_out = best_state;
    return i;
  }

  // The scan from (best, state) up to `stop` met no accepting state: record its loop states.
  void remember_failure(size_t best, uint32_t state, size_t stop) {
    for (size_t i = best; i < stop; ++i) {
      state = t_.next[state + t_.byte_class[data_[i]]];
      if (state == t_.dead) break;
      if ((i + 1) % kMemoStride == 0 && t_.loop[state >> t_.shift])
        memo_.insert(key(i + 1, state));
    }
    if (stop > memo_high_) memo_high_ = stop;
  }

  uint64_t key(size_t position, uint32_t state) const {
    return uint64_t(position) * t_.states + (state >> t_.shift);
  }

  const TokenTables& t_;
  const uint8_t* data_;
  size_t n_;
  std::unordered_set<uint64_t> memo_;
  size_t memo_high_ = 0;
  size_t cached_at_ = ~size_t(0), cached_end_ = 0;
  int32_t cached_kind_ = kNoKind;
};

}  // namespace v1
}  // namespace parafuse::fsm
