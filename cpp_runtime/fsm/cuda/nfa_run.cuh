// parafuse boostfsm on GPUs: one run of an NFA engine (nfa.cuh) over an input in device
// memory, as fsm/sets/lazy_nfa.hpp run_nfa runs it on the CPU: an engine whose matches are at
// most `max_length` bytes long runs its chunks in parallel, each from `max_length` bytes
// before the chunk with an empty state (every chunk starts exactly); an unbounded one runs
// one chunk. Matches, where asked, are counted per chunk, placed by a scan and written by a
// second pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fsm/cuda/nfa.cuh"
#include "fsm/cuda/run.cuh"

namespace parafuse::fsm::cuda {

// Chunk c reports at the boundaries [chunk_begin(c), chunk_begin(c + 1)) (and at n, the last);
// its sets: NfaSets<W> (`scratch`: 2 * words a chunk, for W == 0). Counts per tag into
// `counts` and the chunk's matches into match_counts[c]; or, with `out`, writes them from
// out + first[c].
template <uint32_t W>
__global__ void nfa_chunks(DeviceNfa t, const uint8_t* data, uint64_t n, uint64_t chunks,
                           uint64_t* scratch, unsigned long long* counts,
                           unsigned long long* match_counts, const unsigned long long* first,
                           Match* out) {
  const uint64_t c = thread_index();
  if (c >= chunks) return;
  NfaSets<W> sets(scratch, c, t.words);
  uint64_t* const state = sets.state;
  uint64_t* const cand = sets.cand;
  const uint64_t begin = chunk_begin(n, chunks, c), end = chunk_begin(n, chunks, c + 1);
  const uint64_t last = end == n ? n + 1 : end;
  const bool bounded = t.max_length != ~0ull;
  const uint64_t scan = bounded && begin > t.max_length ? begin - t.max_length : 0;
  for (uint32_t w = 0; w < t.words; ++w) state[w] = 0;
  bool alive = false;
  unsigned long long found = 0;
  Match* next = out ? out + first[c] : nullptr;
  for (uint64_t at = scan; at < last; ++at) {
    if (at >= begin && (alive || t.empty_accepts))
      nfa_report(t, state, nfa_where(t, data, n, at), [&](uint32_t tag) {
        if (next) *next++ = Match{at, tag};
        else add_count(&counts[tag], 1ull), ++found;
      });
    if (at == n) break;
    if (t.starts_at_zero_only && at > 0 && !alive) break;  // no thread can start again
    alive = nfa_step(t, state, cand, t.byte_positions + size_t(data[at]) * t.words,
                     nfa_where(t, data, n, at), alive, true);
  }
  if (!next) match_counts[c] = found;
}

struct NfaRun {
  std::vector<uint64_t> counts;  // per tag of the set
  std::vector<Match> matches;    // with `matches`, by chunk: sorted by the caller
  size_t chunks = 1;
};

inline NfaRun run_nfa_cuda(const NfaTables& t, const uint8_t* data, size_t n,
                           uint32_t tag_count, size_t asked_chunks, bool matches,
                           cudaStream_t stream) {
  NfaRun run;
  run.chunks = t.bounded() && n ? gpu_chunks("spec", n, asked_chunks) : 1;
  const size_t chunks = run.chunks;
  const UploadedNfas uploaded({&t}, stream);
  const DeviceNfa& nfa = uploaded.views()[0];
  DeviceArray<uint64_t> scratch(t.words > kNfaLocalWords ? chunks * 2 * t.words : 1);
  DeviceArray<unsigned long long> counts(std::max<uint32_t>(tag_count, 1)), found(chunks);
  counts.zero(stream);
  with_set_width(uint32_t(t.words), [&](auto width) {
    PF_FSM_LAUNCH(nfa_chunks<decltype(width)::value>, blocks_for(chunks), kBlockThreads, stream,
                  nfa, data, uint64_t(n), uint64_t(chunks), scratch.get(), counts.get(),
                  found.get(), static_cast<const unsigned long long*>(nullptr),
                  static_cast<Match*>(nullptr));
  });
  PF_FSM_CUDA(cudaGetLastError());
  const std::vector<unsigned long long> per_tag = counts.download(tag_count, stream);
  run.counts.assign(per_tag.begin(), per_tag.end());
  if (!matches) return run;
  DeviceArray<unsigned long long> first(chunks + 1);
  PF_FSM_LAUNCH(scan_counts, 1, kScanThreads, stream, found.get(), chunks, first.get());
  PF_FSM_CUDA(cudaGetLastError());
  const unsigned long long total = first.at(chunks, stream);
  DeviceArray<Match> listed(total);
  with_set_width(uint32_t(t.words), [&](auto width) {
    PF_FSM_LAUNCH(nfa_chunks<decltype(width)::value>, blocks_for(chunks), kBlockThreads, stream,
                  nfa, data, uint64_t(n), uint64_t(chunks), scratch.get(),
                  static_cast<unsigned long long*>(nullptr), found.get(), first.get(),
                  listed.get());
  });
  PF_FSM_CUDA(cudaGetLastError());
  run.matches = listed.download(total, stream);
  return run;
}

}  // namespace parafuse::fsm::cuda
