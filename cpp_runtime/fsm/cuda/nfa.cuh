// parafuse boostfsm on GPUs: the bit-parallel NFA engine (fsm/sets/nfa_engine.hpp) in device
// memory, and its step and reports as one device thread takes them: the same rule as the
// host's plain step (DirectNfa), without the host's lazy DFA. A thread keeps its state and
// candidates (`words` 64-bit words each) in arrays of its own where they are at most
// kNfaLocalWords words, else in a slice of a scratch array in device memory (NfaSets).
//
// A report at a boundary lists each tag once: the NFA's tags are numbered locally (at most
// kNfaTags), and a thread marks them in a bitmap before it counts or lists them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "fsm/cuda/device.cuh"
#include "fsm/sets/nfa_engine.hpp"

namespace parafuse::fsm::cuda {

constexpr uint32_t kNfaTags = 256;  // distinct tags of one NFA on the GPU
constexpr uint32_t kNfaTagWords = kNfaTags / 64;
constexpr uint32_t kNfaLocalWords = 8;  // sets of up to this many words in a thread's own memory

// A thread's state and candidates: arrays of its own (the compiler's, interleaved across a
// warp's threads) for sets of up to W words, else (W == 0) its slice of a scratch array.
template <uint32_t W>
struct NfaSets {
  uint64_t own[W > 0 ? 2 * W : 1];
  uint64_t* state;
  uint64_t* cand;
  __device__ NfaSets(uint64_t* scratch, uint64_t index, uint32_t words)
      : state(W > 0 ? own : scratch + index * 2 * words), cand(state + words) {}
};

// launch(std::integral_constant<uint32_t, W>()) for the narrowest W of {1, 2, 4, 8} that
// holds `words`, else W = 0 (the scratch array).
template <class Launch>
inline void with_set_width(uint32_t words, Launch&& launch) {
  if (words <= 1) launch(std::integral_constant<uint32_t, 1>());
  else if (words <= 2) launch(std::integral_constant<uint32_t, 2>());
  else if (words <= 4) launch(std::integral_constant<uint32_t, 4>());
  else if (words <= kNfaLocalWords) launch(std::integral_constant<uint32_t, kNfaLocalWords>());
  else launch(std::integral_constant<uint32_t, 0>());
}

struct DeviceNfa {
  uint32_t words = 1, block_width = 8, tag_count = 0;
  uint64_t max_length = ~0ull;
  bool starts_at_zero_only = false;
  uint64_t conditional_follows = 0, conditional_firsts = 0, empty_accepts = 0;
  const uint8_t* categories = nullptr;          // [256]
  const uint64_t* byte_positions = nullptr;     // [256][words]
  const uint64_t* follow = nullptr;             // [blocks << block_width][words]
  const uint64_t* first = nullptr;              // [words]
  const uint64_t* conditional_follow = nullptr; // (from, to, condition)
  const uint64_t* conditional_first = nullptr;  // (position, condition)
  const uint64_t* accept = nullptr;             // (position, tag, condition)
  const uint64_t* empty_accept = nullptr;       // (tag, condition)
  const uint64_t* accepting_mask = nullptr;     // [words]
  const uint32_t* accept_first = nullptr;       // [64 * words + 1]
  const uint32_t* accept_entry = nullptr;       // [accepts]
  const uint16_t* accept_local = nullptr;       // [accepts]: the entry's local tag
  const uint16_t* empty_local = nullptr;        // [empty accepts]
  const uint32_t* tags = nullptr;               // [tag_count]: local tag -> the set's tag
};

__host__ __device__ inline unsigned lowest_bit(uint64_t bits) {
#ifdef __CUDA_ARCH__
  return unsigned(__ffsll(static_cast<long long>(bits)) - 1);
#else
  return unsigned(__builtin_ctzll(bits));
#endif
}

// The condition bit of the boundary before data[at] (at == n: the end), as nfa_where.
__device__ inline uint64_t nfa_where(const DeviceNfa& t, const uint8_t* data, uint64_t n,
                                     uint64_t at) {
  const unsigned prev = at == 0 ? kPrevStart : t.categories[data[at - 1]];
  const unsigned next = at == n ? kNextEnd
                        : (data[at] == '\n' && at + 1 == n) ? kNextFinalNewline
                                                             : t.categories[data[at]];
  return uint64_t(1) << (prev * 5 + next);
}

// The local tags `state` reports at a boundary of condition `where`, as bits of `found`.
__device__ inline bool nfa_found(const DeviceNfa& t, const uint64_t* state, uint64_t where,
                                 uint64_t* found) {
  bool any = false;
  for (uint32_t k = 0; k < kNfaTagWords; ++k) found[k] = 0;
  for (uint32_t w = 0; w < t.words; ++w)
    for (uint64_t bits = state[w] & t.accepting_mask[w]; bits; bits &= bits - 1) {
      const uint64_t position = 64 * uint64_t(w) + lowest_bit(bits);
      for (uint32_t e = t.accept_first[position]; e < t.accept_first[position + 1]; ++e) {
        const uint32_t a = t.accept_entry[e];
        if (t.accept[3 * a + 2] & where) {
          found[t.accept_local[a] >> 6] |= uint64_t(1) << (t.accept_local[a] & 63);
          any = true;
        }
      }
    }
  for (uint64_t a = 0; a < t.empty_accepts; ++a)
    if (t.empty_accept[2 * a + 1] & where) {
      found[t.empty_local[a] >> 6] |= uint64_t(1) << (t.empty_local[a] & 63);
      any = true;
    }
  return any;
}

// visit(tag) for each tag `state` reports at the boundary `at`.
template <class Visit>
__device__ inline void nfa_report(const DeviceNfa& t, const uint64_t* state, uint64_t where,
                                  Visit&& visit) {
  uint64_t found[kNfaTagWords];
  if (!nfa_found(t, state, where, found)) return;
  for (uint32_t k = 0; k < kNfaTagWords; ++k)
    for (uint64_t bits = found[k]; bits; bits &= bits - 1) visit(t.tags[64 * k + lowest_bit(bits)]);
}

// One step on a byte whose positions are `positions`, at a boundary of condition `where`:
// state = (follow(state) | first, where `inject`) & positions; whether any position is set.
__device__ inline bool nfa_step(const DeviceNfa& t, uint64_t* state, uint64_t* cand,
                                const uint64_t* positions, uint64_t where, bool any,
                                bool inject) {
  const uint32_t words = t.words;
  for (uint32_t w = 0; w < words; ++w) cand[w] = inject ? t.first[w] : 0;
  if (inject)
    for (uint64_t c = 0; c < t.conditional_firsts; ++c)
      if (t.conditional_first[2 * c + 1] & where) {
        const uint64_t position = t.conditional_first[2 * c];
        cand[position >> 6] |= uint64_t(1) << (position & 63);
      }
  if (any) {
    const unsigned width = t.block_width;
    const uint64_t block_mask = (uint64_t(1) << width) - 1;
    for (uint32_t word = 0; word < words; ++word) {
      uint64_t bits = state[word];
      while (bits) {
        const unsigned low = lowest_bit(bits) / width * width;
        const uint64_t block = uint64_t(word) * (64 / width) + low / width;
        const uint64_t* row = t.follow + ((block << width) + ((bits >> low) & block_mask)) * words;
        for (uint32_t w = 0; w < words; ++w) cand[w] |= row[w];
        bits &= ~(block_mask << low);
      }
    }
    for (uint64_t c = 0; c < t.conditional_follows; ++c) {
      const uint64_t* edge = t.conditional_follow + 3 * c;
      if ((edge[2] & where) && ((state[edge[0] >> 6] >> (edge[0] & 63)) & 1))
        cand[edge[1] >> 6] |= uint64_t(1) << (edge[1] & 63);
    }
  }
  bool alive = false;
  for (uint32_t w = 0; w < words; ++w) {
    state[w] = cand[w] & positions[w];
    alive |= state[w] != 0;
  }
  return alive;
}

// The tables of several NFAs in device memory for as long as the object lives: packed in one
// allocation and copied by one transfer (a set of hundreds of patterns confirms each by an
// NFA of its own).
class UploadedNfas {
 public:
  UploadedNfas(const std::vector<const NfaTables*>& nfas, cudaStream_t stream) {
    std::vector<uint64_t> host;  // every array of every NFA, each from a word of its own
    const auto place = [&host](const void* from, size_t bytes) {
      const size_t at = host.size();
      host.resize(at + std::max<size_t>((bytes + 7) / 8, 1), 0);
      if (bytes) std::memcpy(host.data() + at, from, bytes);
      return at;
    };
    std::vector<std::vector<size_t>> places;
    for (const NfaTables* nfa : nfas) places.push_back(pack(*nfa, place));
    device_ = DeviceArray<uint64_t>(host.size());
    device_.upload(host.data(), host.size(), stream);
    PF_FSM_CUDA(cudaStreamSynchronize(stream));  // `host` goes out of scope
    const uint64_t* base = device_.get();
    for (size_t i = 0; i < nfas.size(); ++i) {
      const NfaTables& t = *nfas[i];
      const std::vector<size_t>& at = places[i];
      const auto words = [&](size_t k) { return base + at[k]; };
      const auto halves = [&](size_t k) { return reinterpret_cast<const uint32_t*>(base + at[k]); };
      const auto quarters = [&](size_t k) { return reinterpret_cast<const uint16_t*>(base + at[k]); };
      views_.push_back(DeviceNfa{
          uint32_t(t.words), uint32_t(t.block_width), uint32_t(at[kTagCount]), t.max_length,
          t.starts_at_zero_only, t.conditional_follows, t.conditional_firsts, t.empty_accepts,
          reinterpret_cast<const uint8_t*>(words(0)), words(1), words(2), words(3), words(4),
          words(5), words(6), words(7), words(8), halves(9), halves(10), quarters(11),
          quarters(12), halves(13)});
    }
  }
  const std::vector<DeviceNfa>& views() const { return views_; }

 private:
  static constexpr size_t kTagCount = 14;  // after the 14 arrays' places: the local tags

  // The NFA's arrays placed, in DeviceNfa's order; then its count of local tags.
  template <class Place>
  static std::vector<size_t> pack(const NfaTables& t, Place& place) {
    std::vector<uint32_t> tags;
    for (uint64_t a = 0; a < t.accepts; ++a) tags.push_back(uint32_t(t.accept[3 * a + 1]));
    for (uint64_t a = 0; a < t.empty_accepts; ++a)
      tags.push_back(uint32_t(t.empty_accept[2 * a]));
    std::sort(tags.begin(), tags.end());
    tags.erase(std::unique(tags.begin(), tags.end()), tags.end());
    if (tags.size() > kNfaTags)
      throw std::runtime_error("an NFA engine of " + std::to_string(tags.size()) +
                               " patterns does not run on the GPU (at most " +
                               std::to_string(kNfaTags) + ")");
    const auto local = [&](uint64_t tag) {
      return uint16_t(std::lower_bound(tags.begin(), tags.end(), uint32_t(tag)) - tags.begin());
    };
    std::vector<uint16_t> accept_local(t.accepts), empty_local(t.empty_accepts);
    for (uint64_t a = 0; a < t.accepts; ++a) accept_local[a] = local(t.accept[3 * a + 1]);
    for (uint64_t a = 0; a < t.empty_accepts; ++a) empty_local[a] = local(t.empty_accept[2 * a]);
    const size_t words = 8 * t.words, follow = (size_t(t.blocks) << t.block_width) * words;
    return {place(t.categories, 256),
            place(t.byte_positions, 256 * words),
            place(t.follow, follow),
            place(t.first, words),
            place(t.conditional_follow, 24 * t.conditional_follows),
            place(t.conditional_first, 16 * t.conditional_firsts),
            place(t.accept, 24 * t.accepts),
            place(t.empty_accept, 16 * t.empty_accepts),
            place(t.accepting_mask.data(), words),
            place(t.accept_first.data(), 4 * t.accept_first.size()),
            place(t.accept_entry.data(), 4 * t.accept_entry.size()),
            place(accept_local.data(), 2 * accept_local.size()),
            place(empty_local.data(), 2 * empty_local.size()),
            place(tags.data(), 4 * tags.size()),
            tags.size()};
  }

  DeviceArray<uint64_t> device_;
  std::vector<DeviceNfa> views_;
};

}  // namespace parafuse::fsm::cuda
