// parafuse boostfsm on GPUs: a token set's tables (fsm/tokens/tables.hpp) in device memory,
// and the maximal-munch tokenizer one device thread runs on them (fsm/tokens/tokenizer.hpp
// is the host's; the rule is the same: the longest match from a position, the first rule
// on a tie, an error token up to the next position where some rule matches).
//
// The device tokenizer keeps no memo of failed scans (Reps' memo, on the host). Where a rule
// may read without bound before it fails (a comment or string that never closes:
// TokenTables::needs_memo), a thread may read each byte from many positions; it then has a
// budget of bytes to read, and a thread past it stops and says so (token_run.cuh then
// tokenizes on the host). An input in pieces (token_run.cuh) ends each piece before the
// first token whose scan reached its end.
#pragma once

#include <cstdint>

#include "fsm/cuda/device_tables.cuh"
#include "fsm/tokens/tables.hpp"

namespace parafuse::fsm::cuda {

// What a kernel reads, by value. States are row offsets (state << shift), as on the host.
struct DeviceTokenTables {
  uint32_t shift = 0, start = 0, dead = ~0u, accept_floor = 0;
  int32_t error_kind = 0;
  uint32_t kind_count = 0;
  uint64_t table_bytes = 0;
  const uint8_t* byte_class = nullptr;  // [256]
  const uint32_t* next = nullptr;       // [states << shift]
  const int32_t* accept = nullptr;      // [states]: a kind, kSkipKind or kNoKind
};

// `t` with its byte classes, and its transitions where they fit, read from `shared`
// (copied there by the block's threads; every thread of the block calls it).
__device__ inline DeviceTokenTables in_shared(const DeviceTokenTables& t, SharedTables& shared) {
  DeviceTokenTables s = t;
  for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x) shared.byte_class[i] = t.byte_class[i];
  s.byte_class = shared.byte_class;
  if (t.table_bytes <= kSharedTableBytes) {
    auto* to = reinterpret_cast<uint32_t*>(shared.table);
    for (uint64_t i = threadIdx.x; i < t.table_bytes / 4; i += blockDim.x) to[i] = t.next[i];
    s.next = to;
  }
  __syncthreads();
  return s;
}

// The tables in device memory for as long as the object lives.
class UploadedTokenTables {
 public:
  UploadedTokenTables(const TokenTables& t, cudaStream_t stream)
      : byte_class_(256), next_(size_t(t.states) << t.shift), accept_(t.states) {
    byte_class_.upload(t.byte_class, 256, stream);
    next_.upload(t.next, size_t(t.states) << t.shift, stream);
    accept_.upload(t.accept, t.states, stream);
    view_ = DeviceTokenTables{t.shift, t.start, t.dead, t.accept_floor, int32_t(t.error_kind()),
                              t.kind_count, uint64_t(4) * (uint64_t(t.states) << t.shift),
                              byte_class_.get(), next_.get(), accept_.get()};
  }
  const DeviceTokenTables& view() const { return view_; }

 private:
  DeviceArray<uint8_t> byte_class_;
  DeviceArray<uint32_t> next_;
  DeviceArray<int32_t> accept_;
  DeviceTokenTables view_;
};

// What a kernel tokenizes: data[0, n) in device memory, a piece of the input (`truncated`:
// the input goes on past it); `budget`: the bytes one thread's scans may read in all (~0:
// no bound).
struct TokenInput {
  const uint8_t* data = nullptr;
  uint64_t n = 0, budget = ~uint64_t(0);
  bool truncated = false;
};

// One device thread's tokenizer over a TokenInput. A scan that reaches the end of a
// truncated piece may be cut short: its token is unsure (unsure() gives the first such
// token's start), and the piece's tokenization ends there (the next piece starts there).
class DeviceTokenizer {
 public:
  __device__ DeviceTokenizer(const DeviceTokenTables& t, const TokenInput& input)
      : t_(t), data_(input.data), n_(input.n), budget_(input.budget),
        truncated_(input.truncated) {}

  // Where the token starting at p < n ends, and its kind (a rule's, kSkipKind, or the error
  // kind). Past its budget, or at an unsure token, returns n (the thread's work is then void:
  // over() says so; or ends there: unsure() says where).
  __device__ uint64_t next_token(uint64_t p, int32_t& kind) {
    if (over_ || unsure_ != kNone) return n_;
    hit_end_ = false;
    uint64_t end = longest(p, kind);
    if (end == p && !over_) {
      int32_t ignored;
      end = p + 1;
      while (end < n_ && longest(end, ignored) == end && !over_) ++end;
      kind = t_.error_kind;
      hit_end_ = hit_end_ || (end == n_ && truncated_);  // the error may go on
    }
    if (hit_end_) unsure_ = p;
    return over_ || hit_end_ ? n_ : end;
  }

  // The first token boundary at or after `target`, tokenizing from the boundary p.
  __device__ uint64_t boundary_from(uint64_t p, uint64_t target) {
    int32_t kind;
    while (p < target && p < n_) p = next_token(p, kind);
    return p;
  }

  __device__ bool over() const { return over_; }
  __device__ uint64_t unsure() const { return unsure_; }
  static constexpr uint64_t kNone = ~uint64_t(0);

 private:
  // The end of the longest match at p (p itself when none) and its kind; the last result is
  // kept, as an error token's scan ends where the next token's begins.
  __device__ uint64_t longest(uint64_t p, int32_t& kind) {
    if (p == cached_at_) {
      kind = cached_kind_;
      hit_end_ = hit_end_ || cached_hit_end_;
      return cached_end_;
    }
    uint32_t state = t_.start, best_state = t_.start;
    uint64_t best = p, i = p;
    while (i < n_) {
      state = t_.next[state + t_.byte_class[data_[i]]];
      ++i;
      if (state >= t_.accept_floor) best = i, best_state = state;
      else if (state == t_.dead) break;
    }
    const bool cut = i == n_ && truncated_ && state != t_.dead;
    hit_end_ = hit_end_ || cut;
    if (i - p > budget_) over_ = true;
    budget_ -= over_ ? budget_ : i - p;
    kind = best > p ? t_.accept[best_state >> t_.shift] : kNoKind;
    cached_at_ = p, cached_end_ = best, cached_kind_ = kind, cached_hit_end_ = cut;
    return best;
  }

  DeviceTokenTables t_;
  const uint8_t* data_;
  uint64_t n_, budget_;
  bool truncated_, over_ = false, hit_end_ = false, cached_hit_end_ = false;
  uint64_t unsure_ = kNone;
  uint64_t cached_at_ = ~uint64_t(0), cached_end_ = 0;
  int32_t cached_kind_ = kNoKind;
};

}  // namespace parafuse::fsm::cuda
