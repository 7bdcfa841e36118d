// parafuse boostfsm on GPUs: the start state of every chunk of one piece of the input, by
// scheme (run.cuh says what each does).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "fsm/core/tables.hpp"
#include "fsm/cuda/kernels.cuh"

namespace parafuse::fsm::cuda {

constexpr int kRounds = 2;  // parallel re-validation rounds before the rest is settled in order

// Runs of chunks enum composes in parallel: about sqrt(chunks), so that the longest walk of
// one thread (a run, or the runs' starts) is about sqrt(chunks) lookups, not `chunks`.
inline uint64_t composition_runs(uint64_t chunks) {
  uint64_t runs = 1;
  while (runs * runs < chunks) ++runs;
  return runs;
}

// enum: every chunk from every state, then composed.
inline void enumerate_starts(const DeviceTables& t, const Tables& host, const uint8_t* data,
                             size_t n, size_t chunks, uint32_t* starts, cudaStream_t stream) {
  const uint64_t runs = composition_runs(chunks);
  DeviceArray<uint32_t> map(chunks * host.states), run_maps(runs * host.states), run_starts(runs);
  PF_FSM_LAUNCH(enumerate_chunks, blocks_for(chunks), kBlockThreads, stream, t, data, n, chunks,
                map.get());
  PF_FSM_LAUNCH(compose_runs, blocks_for(runs * host.states), kBlockThreads, stream, t, chunks,
                runs, map.get(), run_maps.get());
  PF_FSM_LAUNCH(start_runs, 1, 1, stream, t, runs, run_maps.get(), run_starts.get());
  PF_FSM_LAUNCH(start_chunks, blocks_for(runs), kBlockThreads, stream, t, chunks, runs, map.get(),
                run_starts.get(), starts);
  PF_FSM_CUDA(cudaGetLastError());
  PF_FSM_CUDA(cudaStreamSynchronize(stream));  // before the maps are freed
}

// The chunks' start states (offsets) on the device, by `scheme`, from `t.start_offset`;
// returns the scheme that ran: `enumerate_unsettled` (auto's) turns a speculation whose
// rounds leave more guesses wrong than the machine has states into enum, in place of walking
// those chunks in order.
inline std::string find_starts(const std::string& scheme, bool enumerate_unsettled,
                               const DeviceTables& t, const Tables& host, const uint8_t* data,
                               size_t n, size_t chunks, uint32_t* starts, cudaStream_t stream,
                               std::string& reason) {
  const unsigned grid = blocks_for(chunks);
  if (scheme == "seq") {
    const uint32_t start = t.start_offset;
    PF_FSM_CUDA(cudaMemcpyAsync(starts, &start, sizeof start, cudaMemcpyHostToDevice, stream));
    PF_FSM_CUDA(cudaStreamSynchronize(stream));  // `start` is a local
    return scheme;
  }
  if (scheme == "enum") {
    enumerate_starts(t, host, data, n, chunks, starts, stream);
    return scheme;
  }
  DeviceArray<uint32_t> ends(chunks);
  DeviceArray<uint8_t> wrong(chunks);
  DeviceArray<unsigned long long> wrong_count(1);
  PF_FSM_LAUNCH(speculate_chunks, grid, kBlockThreads, stream, t, data, n, chunks, host.lookback,
                starts, ends.get());
  // A round moves each wrong guess to the end before it and walks that chunk again, so
  // each guess and the end after it stay a pair; the round that finds none wrong ends.
  int rounds = 0;
  bool settled = false;
  unsigned long long still_wrong = 0;
  for (; rounds < kRounds && !settled; ++rounds) {
    wrong_count.zero(stream);
    PF_FSM_LAUNCH(mark_wrong_guesses, grid, kBlockThreads, stream, t, chunks, starts, ends.get(),
                  wrong.get(), wrong_count.get());
    PF_FSM_CUDA(cudaGetLastError());
    still_wrong = wrong_count.at(0, stream);
    settled = still_wrong == 0;
    if (!settled)
      PF_FSM_LAUNCH(rewalk_guesses, grid, kBlockThreads, stream, t, data, n, chunks, starts,
                    wrong.get(), ends.get());
  }
  reason += "; " + std::to_string(rounds) + " re-validation round" + (rounds == 1 ? "" : "s");
  if (settled) return scheme;
  // Walking the w chunks still wrong in order takes about w chunks' time; enumerating every
  // chunk in parallel, about `states` (each byte steps every state of a chunk's vector).
  if (enumerate_unsettled && still_wrong > host.states) {
    reason += ", the last still finding " + std::to_string(still_wrong) + " of " +
              std::to_string(chunks) + " guesses wrong, more than the machine's " +
              std::to_string(host.states) + " states: enumerated instead";
    enumerate_starts(t, host, data, n, chunks, starts, stream);
    return "enum";
  }
  wrong_count.zero(stream);
  PF_FSM_LAUNCH(settle_guesses, 1, 1, stream, t, data, n, chunks, starts, ends.get(),
                wrong_count.get());
  PF_FSM_CUDA(cudaGetLastError());
  reason += ", then " + std::to_string(wrong_count.at(0, stream)) + " of " +
            std::to_string(chunks) + " chunks walked in order";
  return scheme;
}

}  // namespace parafuse::fsm::cuda
