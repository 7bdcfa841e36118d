// parafuse boostfsm on GPUs: the kernels. One device thread walks one chunk of the
// input; chunk c is bytes [chunk_begin(c), chunk_begin(c + 1)) of n, split evenly.
//   enumerate_chunks   each chunk from every state at once, as one walk of the fused DFA
//                      (a vector of states as one state); where the compiler did not store a
//                      fused transition, the chunk goes on with the vector itself
//   compose_chunks     one thread: the chunks' start states, from the machine's start
//   speculate_chunks   each chunk from a guess: its `lookback` bytes before, walked from
//                      the start state
//   mark_wrong_guesses / rewalk_guesses   a re-validation round: a chunk whose guess is not
//                      the end of the chunk before it walks again from that end
//   settle_guesses     one thread, after the rounds: the true start of each chunk, walking
//                      only the chunks whose guess is still wrong
//   count_chunks       each chunk from its true start: visits of reporting states (and the
//                      matches they make), and the state after the chunk
//   write_matches      each chunk again, writing its matches where a scan of the counts
//                      put them
#pragma once

#include <cstddef>
#include <cstdint>

#include "fsm/core/match.hpp"
#include "fsm/cuda/device_tables.cuh"

namespace parafuse::fsm::cuda {

constexpr uint32_t kMaxVector = 64;       // states a chunk's vector may hold (enumeration)
constexpr uint32_t kSharedCounts = 1024;  // reporting states counted in shared memory

__host__ __device__ inline uint64_t chunk_begin(uint64_t n, uint64_t chunks, uint64_t c) {
  const uint64_t q = n / chunks, r = n % chunks;
  return c * q + (c < r ? c : r);
}

__device__ inline uint64_t thread_index() {
  return uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
}

__global__ void enumerate_chunks(DeviceTables t, const uint8_t* data, uint64_t n,
                                 uint64_t chunks, uint32_t* map) {
  const uint64_t c = thread_index();
  if (c >= chunks) return;
  const uint64_t end = chunk_begin(n, chunks, c + 1);
  uint64_t i = chunk_begin(n, chunks, c);
  uint32_t fused = t.fused_start_offset;
  for (; i < end; ++i) {
    const uint32_t next = fused_step(t, fused, data[i]);
    if (next == kFusedMissing) break;
    fused = next;
  }
  const uint32_t* vector = t.fused_vectors + size_t(fused >> t.fused_shift) * t.states;
  uint32_t* out = map + c * t.states;
  if (i == end) {
    for (uint32_t s = 0; s < t.states; ++s) out[s] = vector[s] << t.shift;
    return;
  }
  uint32_t live[kMaxVector];  // the host runs this scheme only where states <= kMaxVector
  for (uint32_t s = 0; s < t.states; ++s) live[s] = vector[s] << t.shift;
  for (; i < end; ++i)
    for (uint32_t s = 0; s < t.states; ++s) live[s] = step(t, live[s], data[i]);
  for (uint32_t s = 0; s < t.states; ++s) out[s] = live[s];
}

__global__ void compose_chunks(DeviceTables t, uint64_t chunks, const uint32_t* map,
                               uint32_t* starts) {
  if (thread_index() != 0) return;
  uint32_t state = t.start_offset;
  for (uint64_t c = 0; c < chunks; ++c) {
    starts[c] = state;
    state = map[c * t.states + (state >> t.shift)];
  }
}

__device__ inline uint32_t walk(const DeviceTables& t, const uint8_t* data, uint64_t begin,
                                uint64_t end, uint32_t state) {
  for (uint64_t i = begin; i < end; ++i) state = step(t, state, data[i]);
  return state;
}

__global__ void speculate_chunks(DeviceTables t, const uint8_t* data, uint64_t n,
                                 uint64_t chunks, uint32_t lookback, uint32_t* guesses,
                                 uint32_t* ends) {
  const uint64_t c = thread_index();
  if (c >= chunks) return;
  const uint64_t begin = chunk_begin(n, chunks, c);
  const uint64_t from = c == 0 ? begin : (begin > lookback ? begin - lookback : 0);
  const uint32_t guess = walk(t, data, from, begin, t.start_offset);
  guesses[c] = guess;
  ends[c] = walk(t, data, begin, chunk_begin(n, chunks, c + 1), guess);
}

__global__ void mark_wrong_guesses(DeviceTables t, uint64_t chunks, uint32_t* guesses,
                                   const uint32_t* ends, uint8_t* wrong,
                                   unsigned long long* wrong_count) {
  const uint64_t c = thread_index();
  if (c >= chunks) return;
  const uint32_t want = c == 0 ? t.start_offset : ends[c - 1];
  wrong[c] = guesses[c] != want;
  if (wrong[c]) guesses[c] = want, add_count(wrong_count, 1ull);
}

__global__ void rewalk_guesses(DeviceTables t, const uint8_t* data, uint64_t n, uint64_t chunks,
                               const uint32_t* guesses, const uint8_t* wrong, uint32_t* ends) {
  const uint64_t c = thread_index();
  if (c >= chunks || !wrong[c]) return;
  ends[c] = walk(t, data, chunk_begin(n, chunks, c), chunk_begin(n, chunks, c + 1), guesses[c]);
}

__global__ void settle_guesses(DeviceTables t, const uint8_t* data, uint64_t n, uint64_t chunks,
                               uint32_t* guesses, const uint32_t* ends,
                               unsigned long long* walked) {
  if (thread_index() != 0) return;
  uint32_t state = t.start_offset;
  for (uint64_t c = 0; c < chunks; ++c) {
    if (guesses[c] == state) {
      state = ends[c];
      continue;
    }
    guesses[c] = state;
    state = walk(t, data, chunk_begin(n, chunks, c), chunk_begin(n, chunks, c + 1), state);
    ++*walked;
  }
}

// `counts`: [reporting states]; `match_counts` (or null): [chunks], the matches of each.
__global__ void count_chunks(DeviceTables t, const uint8_t* data, uint64_t n, uint64_t chunks,
                             const uint32_t* starts, unsigned long long* counts,
                             uint32_t reporting, unsigned long long* match_counts,
                             uint32_t* ends) {
  __shared__ unsigned long long block_counts[kSharedCounts];
  const bool shared = reporting <= kSharedCounts;
  if (shared) {
    for (uint32_t r = threadIdx.x; r < reporting; r += blockDim.x) block_counts[r] = 0;
    __syncthreads();
  }
  const uint64_t c = thread_index();
  if (c < chunks) {
    uint32_t state = starts[c];
    unsigned long long matches = 0;
    const uint64_t end = chunk_begin(n, chunks, c + 1);
    for (uint64_t i = chunk_begin(n, chunks, c); i < end; ++i) {
      state = step(t, state, data[i]);
      if (state < t.floor_offset) continue;
      const uint32_t r = (state - t.floor_offset) >> t.shift;
      add_count(shared ? &block_counts[r] : &counts[r], 1ull);
      const uint32_t internal = state >> t.shift;
      matches += t.tag_begin[internal + 1] - t.tag_begin[internal];
    }
    if (match_counts) match_counts[c] = matches;
    ends[c] = state;
  }
  if (shared) {
    __syncthreads();
    for (uint32_t r = threadIdx.x; r < reporting; r += blockDim.x)
      if (block_counts[r]) add_count(&counts[r], block_counts[r]);
  }
}

__global__ void write_matches(DeviceTables t, const uint8_t* data, uint64_t n, uint64_t chunks,
                              const uint32_t* starts, const unsigned long long* first,
                              Match* out) {
  const uint64_t c = thread_index();
  if (c >= chunks) return;
  uint32_t state = starts[c];
  Match* next = out + first[c];
  const uint64_t end = chunk_begin(n, chunks, c + 1);
  for (uint64_t i = chunk_begin(n, chunks, c); i < end; ++i) {
    state = step(t, state, data[i]);
    if (state < t.floor_offset) continue;
    const uint32_t internal = state >> t.shift;
    for (uint32_t k = t.tag_begin[internal]; k < t.tag_begin[internal + 1]; ++k) {
      const uint32_t entry = t.tag_list[k];
      *next++ = Match{i + 1 - (entry >> 31), entry & ~kDelayed};
    }
  }
}

}  // namespace parafuse::fsm::cuda
