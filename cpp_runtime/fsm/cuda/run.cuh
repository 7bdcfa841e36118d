// parafuse boostfsm on GPUs: one run of a machine over an input in host memory, with the
// RunOptions and RunResult of the CPU engine (fsm/core/run_result.hpp). Schemes:
//   seq    one device thread walks the whole input
//   enum   every chunk from every state (kernels.cuh enumerate_chunks), then composed
//   spec   every chunk from a guess, re-validated in up to kRounds parallel rounds (a chunk
//          whose guess is not the end of the chunk before it walks again from that end);
//          then one thread settles the chunks still wrong, walking them in order
//   auto   enum where a chunk's vector fits (a complete fused DFA, or at most kMaxVector
//          states), else spec: a rule, not yet a measurement
// Then every chunk is walked from its true start to count (and list) the matches. With
// RunOptions::profile the result has two phases: "copy in" (the input to device memory) and
// "on the device" (the schemes, counts and matches, until the results are on the host).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "fsm/core/run_result.hpp"
#include "fsm/cuda/kernels.cuh"

namespace parafuse::fsm::cuda {

constexpr size_t kDefaultChunkBytes = 16 << 10;  // chunks of at least this many bytes
constexpr size_t kMaxChunks = size_t(1) << 20;
constexpr int kRounds = 2;  // parallel re-validation rounds before the rest is settled in order

inline bool enum_fits(const Tables& t) { return t.fused_complete || t.states <= kMaxVector; }

// The scheme that runs, and why; throws for a scheme the GPU does not run.
inline std::string gpu_scheme(const Tables& t, const std::string& asked, std::string& reason) {
  if (asked == "auto") {
    reason = enum_fits(t) ? "auto: each chunk's vector of states fits (enum)"
                          : "auto: the fused DFA is partial and the machine has more than " +
                                std::to_string(kMaxVector) + " states (spec)";
    return enum_fits(t) ? "enum" : "spec";
  }
  if (asked == "enum" && !enum_fits(t))
    throw std::runtime_error("enum on the GPU needs a complete fused DFA or at most " +
                             std::to_string(kMaxVector) + " states; this machine has " +
                             std::to_string(t.states) + " and a partial fused DFA (use spec)");
  if (asked != "seq" && asked != "enum" && asked != "spec")
    throw std::runtime_error("scheme '" + asked + "' does not run on the GPU (seq, enum, spec, "
                             "auto)");
  reason = "as requested";
  return asked;
}

inline size_t gpu_chunks(const std::string& scheme, size_t n, size_t asked) {
  if (scheme == "seq" || n == 0) return 1;
  const size_t wanted = asked ? asked : n / kDefaultChunkBytes;
  return std::clamp<size_t>(wanted, 1, std::min(n, kMaxChunks));
}

// The chunks' start states (offsets) on the device, by `scheme`.
inline void find_starts(const std::string& scheme, const DeviceTables& t, const Tables& host,
                        const uint8_t* data, size_t n, size_t chunks, uint32_t* starts,
                        cudaStream_t stream, std::string& reason) {
  const unsigned grid = blocks_for(chunks);
  if (scheme == "seq") {
    const uint32_t start = host.start << host.shift;
    PF_FSM_CUDA(cudaMemcpyAsync(starts, &start, sizeof start, cudaMemcpyHostToDevice, stream));
    PF_FSM_CUDA(cudaStreamSynchronize(stream));  // `start` is a local
    return;
  }
  if (scheme == "enum") {
    DeviceArray<uint32_t> map(chunks * host.states);
    PF_FSM_LAUNCH(enumerate_chunks, grid, kBlockThreads, stream, t, data, n, chunks, map.get());
    PF_FSM_LAUNCH(compose_chunks, 1, 1, stream, t, chunks, map.get(), starts);
    PF_FSM_CUDA(cudaGetLastError());
    PF_FSM_CUDA(cudaStreamSynchronize(stream));  // before `map` is freed
    return;
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
  for (; rounds < kRounds && !settled; ++rounds) {
    wrong_count.zero(stream);
    PF_FSM_LAUNCH(mark_wrong_guesses, grid, kBlockThreads, stream, t, chunks, starts, ends.get(),
                  wrong.get(), wrong_count.get());
    PF_FSM_CUDA(cudaGetLastError());
    settled = wrong_count.download(1, stream)[0] == 0;
    if (!settled)
      PF_FSM_LAUNCH(rewalk_guesses, grid, kBlockThreads, stream, t, data, n, chunks, starts,
                    wrong.get(), ends.get());
  }
  reason += "; " + std::to_string(rounds) + " re-validation round" + (rounds == 1 ? "" : "s");
  if (settled) return;
  wrong_count.zero(stream);
  PF_FSM_LAUNCH(settle_guesses, 1, 1, stream, t, data, n, chunks, starts, ends.get(),
                wrong_count.get());
  PF_FSM_CUDA(cudaGetLastError());
  reason += ", then " + std::to_string(wrong_count.download(1, stream)[0]) + " of " +
            std::to_string(chunks) + " chunks walked in order";
}

// Phase times for RunOptions::profile: each lap waits for the stream, so a lap is the
// device's time for what was queued since the last one.
class PhaseClock {
 public:
  PhaseClock(bool on, cudaStream_t stream, std::vector<PhaseTiming>& phases)
      : on_(on), stream_(stream), phases_(phases) {
    if (on_) PF_FSM_CUDA(cudaStreamSynchronize(stream_)), last_ = now();
  }
  void lap(const char* name, bool parallel) {
    if (!on_) return;
    PF_FSM_CUDA(cudaStreamSynchronize(stream_));
    const auto at = now();
    phases_.push_back(PhaseTiming{name, parallel, std::chrono::duration<double>(at - last_).count(), {}});
    last_ = at;
  }

 private:
  static std::chrono::steady_clock::time_point now() { return std::chrono::steady_clock::now(); }
  bool on_;
  cudaStream_t stream_;
  std::vector<PhaseTiming>& phases_;
  std::chrono::steady_clock::time_point last_{};
};

inline RunResult run_machine_cuda(const Tables& t, const uint8_t* host_data, size_t n,
                                  const RunOptions& options) {
  RunResult result;
  result.scheme = gpu_scheme(t, options.scheme, result.reason);
  const size_t chunks = gpu_chunks(result.scheme, n, options.chunks);
  result.threads = int(chunks);
  result.chunks = chunks;
  result.entry_bytes = int(t.entry_bytes);
  const uint32_t reporting = t.reporting_states();
  std::vector<unsigned long long> visits(reporting, 0);
  uint32_t final_offset = t.start << t.shift;
  if (n) {
    RunStream stream;
    UploadedTables tables(t, stream);
    PhaseClock clock(options.profile, stream, result.phases);
    DeviceArray<uint8_t> data(n);
    data.upload(host_data, n, stream);
    clock.lap("copy in", false);
    DeviceArray<uint32_t> starts(chunks), ends(chunks);
    find_starts(result.scheme, tables.view(), t, data.get(), n, chunks, starts.get(), stream,
                result.reason);
    DeviceArray<unsigned long long> counts(std::max<uint32_t>(reporting, 1));
    DeviceArray<unsigned long long> match_counts(options.matches ? chunks : 0);
    counts.zero(stream);
    PF_FSM_LAUNCH(count_chunks, blocks_for(chunks), kBlockThreads, stream, tables.view(),
                  data.get(), n, chunks, starts.get(), counts.get(), reporting,
                  options.matches ? match_counts.get() : nullptr, ends.get());
    PF_FSM_CUDA(cudaGetLastError());
    visits = counts.download(reporting, stream);
    final_offset = ends.download(chunks, stream).back();
    if (options.matches) {
      std::vector<unsigned long long> first = match_counts.download(chunks, stream);
      unsigned long long total = 0;
      for (auto& count : first) total += count, count = total - count;  // exclusive scan
      DeviceArray<unsigned long long> first_on_device(chunks);
      first_on_device.upload(first.data(), chunks, stream);
      DeviceArray<Match> matches(total);
      PF_FSM_LAUNCH(write_matches, blocks_for(chunks), kBlockThreads, stream, tables.view(),
                    data.get(), n, chunks, starts.get(), first_on_device.get(), matches.get());
      PF_FSM_CUDA(cudaGetLastError());
      result.matches = matches.download(total, stream);
    }
    clock.lap("on the device", true);
  }
  result.counts.assign(t.tag_count, 0);
  for (uint32_t r = 0; r < reporting; ++r) {
    const uint32_t state = t.report_floor + r;
    for (uint32_t i = t.tag_begin[state]; i < t.tag_begin[state + 1]; ++i)
      result.counts[t.tag_list[i] & ~kDelayed] += visits[r];
  }
  const uint32_t final_internal = final_offset >> t.shift;
  result.final_state = t.external[final_internal];
  for (uint32_t i = t.end_begin[final_internal]; i < t.end_begin[final_internal + 1]; ++i) {
    ++result.counts[t.end_list[i] & ~kDelayed];
    if (options.matches) result.matches.push_back(Match{n - (t.end_list[i] >> 31),
                                                        t.end_list[i] & ~kDelayed});
  }
  if (options.matches) restore_match_order(result.matches);
  return result;
}

}  // namespace parafuse::fsm::cuda
