// parafuse boostfsm on GPUs: the kernels. One device thread walks one chunk of the
// input; chunk c is bytes [chunk_begin(c), chunk_begin(c + 1)) of n, split evenly.
//   enumerate_chunks   each chunk from every state at once, as one walk of the fused DFA
//                      (a vector of states as one state); where the compiler did not store a
//                      fused transition, the chunk goes on with the vector itself
//   compose_runs / start_runs / start_chunks   the chunks' start states, from the machine's
//                      start: the maps composed in about sqrt(chunks) runs in parallel, the
//                      runs' starts by one thread, then each run's chunks in parallel
//   speculate_chunks   each chunk from a guess: its `lookback` bytes before, walked from
//                      the start state
//   mark_wrong_guesses / rewalk_guesses   a re-validation round: a chunk whose guess is not
//                      the end of the chunk before it walks again from that end
//   settle_guesses     one thread, after the rounds: the true start of each chunk, walking
//                      only the chunks whose guess is still wrong
//   count_chunks       each chunk from its true start: visits of reporting states (and the
//                      matches they make), and the state after the chunk
//   scan_counts        one block: the exclusive prefix sums of the chunks' match counts
//                      (where each chunk's matches go) and their total
//   write_matches      each chunk again, writing its matches where the scan put them
// Each kernel first copies the tables it walks to shared memory (device_tables.cuh
// in_shared), so every thread of a block runs to its __syncthreads before a thread past the
// last chunk leaves; each walk reads its chunk 16 bytes a load (for_each_byte).
#pragma once

#include <cstddef>
#include <cstdint>

#include "fsm/core/match.hpp"
#include "fsm/cuda/device_tables.cuh"

namespace parafuse::fsm::cuda {

constexpr uint32_t kMaxVector = 64;       // states a chunk's vector may hold (enumeration)
constexpr uint32_t kSharedCounts = 1024;  // reporting states counted in shared memory
constexpr uint32_t kThreadCounts = 8;     // ... and in each thread's own counters first

__host__ __device__ inline uint64_t chunk_begin(uint64_t n, uint64_t chunks, uint64_t c) {
  const uint64_t q = n / chunks, r = n % chunks;
  return c * q + (c < r ? c : r);
}

__device__ inline uint64_t thread_index() {
  return uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
}

// visit(byte, index) for the bytes [begin, end) of `data`, in order: the aligned 16-byte
// words inside the range as one load each.
template <class Visit>
__device__ inline void for_each_byte(const uint8_t* data, uint64_t begin, uint64_t end,
                                     Visit&& visit) {
  uint64_t i = begin;
  for (; i < end && (reinterpret_cast<uintptr_t>(data + i) & 15); ++i) visit(data[i], i);
  for (; i + 16 <= end; i += 16) {
    const uint4 word = *reinterpret_cast<const uint4*>(data + i);
    const uint32_t parts[4] = {word.x, word.y, word.z, word.w};
#pragma unroll
    for (int k = 0; k < 16; ++k) visit(uint8_t(parts[k >> 2] >> (8 * (k & 3))), i + k);
  }
  for (; i < end; ++i) visit(data[i], i);
}

__device__ inline uint32_t walk(const DeviceTables& t, const uint8_t* data, uint64_t begin,
                                uint64_t end, uint32_t state) {
  for_each_byte(data, begin, end, [&](uint8_t byte, uint64_t) { state = step(t, state, byte); });
  return state;
}

__global__ void enumerate_chunks(DeviceTables global, const uint8_t* data, uint64_t n,
                                 uint64_t chunks, uint32_t* map) {
  __shared__ SharedTables shared;
  const DeviceTables t = in_shared(global, true, shared);
  const uint64_t c = thread_index();
  if (c >= chunks) return;
  uint32_t fused = t.fused_start_offset;
  bool partial = false;  // left the fused DFA: `live` holds the vector
  uint32_t live[kMaxVector];  // the host runs this scheme only where states <= kMaxVector
  for_each_byte(data, chunk_begin(n, chunks, c), chunk_begin(n, chunks, c + 1),
                [&](uint8_t byte, uint64_t) {
    if (!partial) {
      const uint32_t next = fused_step(t, fused, byte);
      if (next != kFusedMissing) {
        fused = next;
        return;
      }
      const uint32_t* vector = global.fused_vectors + size_t(fused >> t.fused_shift) * t.states;
      for (uint32_t s = 0; s < t.states; ++s) live[s] = vector[s] << t.shift;
      partial = true;
    }
    // the tables in shared memory are the fused ones: the machine's come from `global`
    for (uint32_t s = 0; s < t.states; ++s) live[s] = step(global, live[s], byte);
  });
  uint32_t* out = map + c * t.states;
  const uint32_t* vector = global.fused_vectors + size_t(fused >> t.fused_shift) * t.states;
  for (uint32_t s = 0; s < t.states; ++s) out[s] = partial ? live[s] : vector[s] << t.shift;
}

// The chunks' maps composed in runs of consecutive chunks: thread (r, s) follows state s
// through run r, giving run_maps[r * states + s] (offsets, as the chunks' maps).
__global__ void compose_runs(DeviceTables t, uint64_t chunks, uint64_t runs, const uint32_t* map,
                             uint32_t* run_maps) {
  const uint64_t i = thread_index();
  if (i >= runs * t.states) return;
  const uint64_t r = i / t.states;
  uint32_t state = uint32_t(i % t.states) << t.shift;
  for (uint64_t c = chunk_begin(chunks, runs, r); c < chunk_begin(chunks, runs, r + 1); ++c)
    state = map[c * t.states + (state >> t.shift)];
  run_maps[i] = state;
}

// One thread: each run's start state, from the machine's start.
__global__ void start_runs(DeviceTables t, uint64_t runs, const uint32_t* run_maps,
                           uint32_t* run_starts) {
  if (thread_index() != 0) return;
  uint32_t state = t.start_offset;
  for (uint64_t r = 0; r < runs; ++r) {
    run_starts[r] = state;
    state = run_maps[r * t.states + (state >> t.shift)];
  }
}

// Thread r: the start states of run r's chunks, from the run's start.
__global__ void start_chunks(DeviceTables t, uint64_t chunks, uint64_t runs, const uint32_t* map,
                             const uint32_t* run_starts, uint32_t* starts) {
  const uint64_t r = thread_index();
  if (r >= runs) return;
  uint32_t state = run_starts[r];
  for (uint64_t c = chunk_begin(chunks, runs, r); c < chunk_begin(chunks, runs, r + 1); ++c) {
    starts[c] = state;
    state = map[c * t.states + (state >> t.shift)];
  }
}

__global__ void speculate_chunks(DeviceTables global, const uint8_t* data, uint64_t n,
                                 uint64_t chunks, uint32_t lookback, uint32_t* guesses,
                                 uint32_t* ends) {
  __shared__ SharedTables shared;
  const DeviceTables t = in_shared(global, false, shared);
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

__global__ void rewalk_guesses(DeviceTables global, const uint8_t* data, uint64_t n,
                               uint64_t chunks, const uint32_t* guesses, const uint8_t* wrong,
                               uint32_t* ends) {
  __shared__ SharedTables shared;
  const DeviceTables t = in_shared(global, false, shared);
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
// Visits are counted by each thread for at most kThreadCounts reporting states (no two
// threads touch one counter while they walk: a machine reporting at every byte would
// otherwise serialise a warp on one counter), then in the block's shared counters for at most
// kSharedCounts, else in device memory.
__global__ void count_chunks(DeviceTables global, const uint8_t* data, uint64_t n,
                             uint64_t chunks, const uint32_t* starts, unsigned long long* counts,
                             uint32_t reporting, unsigned long long* match_counts,
                             uint32_t* ends) {
  __shared__ SharedTables shared;
  __shared__ unsigned long long block_counts[kSharedCounts];
  const bool in_block = reporting <= kSharedCounts, in_thread = reporting <= kThreadCounts;
  if (in_block)
    for (uint32_t r = threadIdx.x; r < reporting; r += blockDim.x) block_counts[r] = 0;
  const DeviceTables t = in_shared(global, false, shared);  // its __syncthreads covers both
  const uint64_t c = thread_index();
  if (c < chunks) {
    uint32_t state = starts[c];
    unsigned long long matches = 0;
    unsigned long long mine[kThreadCounts] = {};
    for_each_byte(data, chunk_begin(n, chunks, c), chunk_begin(n, chunks, c + 1),
                  [&](uint8_t byte, uint64_t) {
      state = step(t, state, byte);
      if (state < t.floor_offset) return;
      const uint32_t r = (state - t.floor_offset) >> t.shift;
      if (in_thread) ++mine[r];
      else add_count(in_block ? &block_counts[r] : &counts[r], 1ull);
      const uint32_t internal = state >> t.shift;
      matches += t.tag_begin[internal + 1] - t.tag_begin[internal];
    });
    if (in_thread)
      for (uint32_t r = 0; r < reporting; ++r)
        if (mine[r]) add_count(&block_counts[r], mine[r]);
    if (match_counts) match_counts[c] = matches;
    ends[c] = state;
  }
  if (in_block) {
    __syncthreads();
    for (uint32_t r = threadIdx.x; r < reporting; r += blockDim.x)
      if (block_counts[r]) add_count(&counts[r], block_counts[r]);
  }
}

constexpr int kScanThreads = 256;

// `first[c]`: the matches of the chunks before c; `first[chunks]`: all of them. One block of
// kScanThreads: each thread sums a run of chunks, the runs' sums are scanned, and each thread
// writes its run's prefixes.
__global__ void scan_counts(const unsigned long long* counts, uint64_t chunks,
                            unsigned long long* first) {
  __shared__ unsigned long long runs[kScanThreads];
  const uint64_t begin = chunk_begin(chunks, kScanThreads, threadIdx.x);
  const uint64_t end = chunk_begin(chunks, kScanThreads, threadIdx.x + 1);
  unsigned long long sum = 0;
  for (uint64_t c = begin; c < end; ++c) sum += counts[c];
  runs[threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long total = 0;
    for (int k = 0; k < kScanThreads; ++k) {
      const unsigned long long run = runs[k];
      runs[k] = total;
      total += run;
    }
    first[chunks] = total;
  }
  __syncthreads();
  unsigned long long running = runs[threadIdx.x];
  for (uint64_t c = begin; c < end; ++c) first[c] = running, running += counts[c];
}

// Match offsets are `base` plus the offsets in `data`.
__global__ void write_matches(DeviceTables global, const uint8_t* data, uint64_t n,
                              uint64_t chunks, const uint32_t* starts,
                              const unsigned long long* first, uint64_t base, Match* out) {
  __shared__ SharedTables shared;
  const DeviceTables t = in_shared(global, false, shared);
  const uint64_t c = thread_index();
  if (c >= chunks) return;
  uint32_t state = starts[c];
  Match* next = out + first[c];
  for_each_byte(data, chunk_begin(n, chunks, c), chunk_begin(n, chunks, c + 1),
                [&](uint8_t byte, uint64_t i) {
    state = step(t, state, byte);
    if (state < t.floor_offset) return;
    const uint32_t internal = state >> t.shift;
    for (uint32_t k = t.tag_begin[internal]; k < t.tag_begin[internal + 1]; ++k) {
      const uint32_t entry = t.tag_list[k];
      *next++ = Match{base + i + 1 - (entry >> 31), entry & ~kDelayed};
    }
  });
}

}  // namespace parafuse::fsm::cuda
