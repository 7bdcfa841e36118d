// parafuse boostfsm on GPUs: one run of a machine over an input in host memory, with the
// RunOptions and RunResult of the CPU engine (fsm/core/run_result.hpp). Schemes:
//   seq    one device thread walks the whole input
//   enum   every chunk from every state (kernels.cuh enumerate_chunks), then composed
//   spec   every chunk from a guess, re-validated in up to kRounds parallel rounds (a chunk
//          whose guess is not the end of the chunk before it walks again from that end);
//          then one thread settles the chunks still wrong, walking them in order
//   auto   enum where the fused DFA is complete; else spec, and where a chunk's vector fits
//          (at most kMaxVector states) enum for a piece whose rounds leave more guesses wrong
//          than the machine has states (more chunks to walk in order than enum's steps a byte)
// Then every chunk is walked from its true start to count (and list) the matches. With
// RunOptions::profile the result has two phases: "copy in" (the input to device memory) and
// "on the device" (the schemes, counts and matches, until the results are on the host); an
// input of several pieces has one, "pieces, copied while walked".
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "fsm/core/run_result.hpp"
#include "fsm/cuda/starts.cuh"

namespace parafuse::fsm::cuda {

constexpr size_t kDefaultChunkBytes = 16 << 10;  // chunks of this many bytes where they fill
constexpr size_t kLeastChunkBytes = 1 << 10;     // the device, else smaller, down to this
constexpr size_t kMaxChunks = size_t(1) << 20;

// The threads the device holds at once: its SMs times the threads of an SM (a chunk a thread:
// fewer chunks leave SMs idle, and the rest without other warps to hide their loads' latency).
inline size_t resident_threads() {
  int device = 0, sms = 1, per_sm = 1;
  PF_FSM_CUDA(cudaGetDevice(&device));
  PF_FSM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  PF_FSM_CUDA(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  return size_t(sms) * size_t(per_sm);
}

inline bool enum_fits(const Tables& t) { return t.fused_complete || t.states <= kMaxVector; }

// What runs: `scheme`, and (auto's speculation) whether a piece whose guesses the rounds
// leave wrong is enumerated instead of walked in order.
struct GpuPlan {
  std::string scheme;
  bool enumerate_unsettled = false;
};

// The plan, and why; throws for a scheme the GPU does not run. `auto` enumerates where the
// fused DFA is complete (one lookup a byte, from every state at once); else it speculates,
// and enumerates a piece whose guesses do not settle (starts.cuh) where a chunk's vector fits.
inline GpuPlan gpu_plan(const Tables& t, const std::string& asked, std::string& reason) {
  if (asked == "auto") {
    if (t.fused_complete) {
      reason = "auto: the fused DFA is complete, one lookup a byte from every state (enum)";
      return {"enum", false};
    }
    const bool fits = enum_fits(t);
    reason = "auto: the fused DFA is partial, so speculation first (spec)" +
             std::string(fits ? ", enumeration where its guesses do not settle" : "");
    return {"spec", fits};
  }
  if (asked == "enum" && !enum_fits(t))
    throw std::runtime_error("enum on the GPU needs a complete fused DFA or at most " +
                             std::to_string(kMaxVector) + " states; this machine has " +
                             std::to_string(t.states) + " and a partial fused DFA (use spec)");
  if (asked != "seq" && asked != "enum" && asked != "spec")
    throw std::runtime_error("scheme '" + asked + "' does not run on the GPU (seq, enum, spec, "
                             "auto)");
  reason = "as requested";
  return {asked, false};
}

inline size_t gpu_chunks(const std::string& scheme, size_t n, size_t asked) {
  if (scheme == "seq" || n == 0) return 1;
  const size_t wanted = asked ? asked
                              : std::max(n / kDefaultChunkBytes,
                                         std::min(n / kLeastChunkBytes, resident_threads()));
  return std::clamp<size_t>(wanted, 1, std::min(n, kMaxChunks));
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
    const double seconds = std::chrono::duration<double>(at - last_).count();
    phases_.push_back(PhaseTiming{name, parallel, seconds, {}});
    last_ = at;
  }

 private:
  static std::chrono::steady_clock::time_point now() { return std::chrono::steady_clock::now(); }
  bool on_;
  cudaStream_t stream_;
  std::vector<PhaseTiming>& phases_;
  std::chrono::steady_clock::time_point last_{};
};

// The input goes to the device in pieces of at most piece_bytes() (default 1 GiB,
// $PARAFUSE_FSM_GPU_PIECE_BYTES to change it), two buffers in turn: piece k + 1 is copied on
// a stream of its own while piece k is walked, each piece from the state the one before
// ended in. `--chunks` counts the chunks of one piece.
inline size_t piece_bytes() {
  const char* text = std::getenv("PARAFUSE_FSM_GPU_PIECE_BYTES");
  if (!text) return size_t(1) << 30;
  char* end = nullptr;
  const unsigned long long asked = std::strtoull(text, &end, 10);
  if (*text < '0' || *text > '9' || *end || asked == 0)
    throw std::runtime_error(std::string("PARAFUSE_FSM_GPU_PIECE_BYTES='") + text +
                             "' is not a number of bytes of at least 1");
  return size_t(asked);
}

// What the walk of the pieces adds up.
struct PieceTotals {
  DeviceArray<unsigned long long> visits;  // [reporting states]
  std::vector<Match> matches;
  uint32_t state;  // the offset the input so far ended in
};

// One piece of `n` bytes at `base` in `data` (device memory), from `totals.state`.
inline void walk_piece(GpuPlan& plan, const UploadedTables& tables, const Tables& t,
                       const uint8_t* data, size_t n, uint64_t base, size_t chunks,
                       bool matches, cudaStream_t stream, PieceTotals& totals,
                       std::string& reason) {
  DeviceTables view = tables.view();
  view.start_offset = totals.state;
  DeviceArray<uint32_t> starts(chunks), ends(chunks);
  const std::string ran =
      find_starts(plan.scheme, plan.enumerate_unsettled, view, t, data, n, chunks, starts.get(),
                  stream, reason);
  if (ran != plan.scheme) plan = {ran, false};  // the pieces after it are enumerated too
  DeviceArray<unsigned long long> match_counts(matches ? chunks : 0);
  PF_FSM_LAUNCH(count_chunks, blocks_for(chunks), kBlockThreads, stream, view, data, n, chunks,
                starts.get(), totals.visits.get(), t.reporting_states(),
                matches ? match_counts.get() : nullptr, ends.get());
  PF_FSM_CUDA(cudaGetLastError());
  totals.state = ends.at(chunks - 1, stream);
  if (!matches) return;
  DeviceArray<unsigned long long> first(chunks + 1);
  PF_FSM_LAUNCH(scan_counts, 1, kScanThreads, stream, match_counts.get(), chunks, first.get());
  PF_FSM_CUDA(cudaGetLastError());
  const unsigned long long total = first.at(chunks, stream);
  DeviceArray<Match> found(total);
  PF_FSM_LAUNCH(write_matches, blocks_for(chunks), kBlockThreads, stream, view, data, n, chunks,
                starts.get(), first.get(), base, found.get());
  PF_FSM_CUDA(cudaGetLastError());
  const std::vector<Match> piece = found.download(total, stream);
  totals.matches.insert(totals.matches.end(), piece.begin(), piece.end());
}

// The pieces of a host input: piece k + 1 copied on `copies` while piece k is walked.
inline void walk_in_pieces(GpuPlan& plan, const UploadedTables& tables,
                           const Tables& t, const uint8_t* host_data, size_t n, size_t piece,
                           const RunOptions& options, cudaStream_t stream, PhaseClock& clock,
                           PieceTotals& totals, std::string& reason) {
  RunStream copies;
  DeviceArray<uint8_t> buffers[2] = {DeviceArray<uint8_t>(piece),
                                     DeviceArray<uint8_t>(n > piece ? piece : 0)};
  RunEvent copied[2], walked[2];
  buffers[0].upload(host_data, piece, copies);
  PF_FSM_CUDA(cudaEventRecord(copied[0], copies));
  if (n == piece) {
    PF_FSM_CUDA(cudaStreamWaitEvent(stream, copied[0], 0));
    clock.lap("copy in", false);
  }
  for (size_t begin = 0, k = 0; begin < n; begin += piece, ++k) {
    const size_t length = std::min(piece, n - begin), b = k % 2;
    PF_FSM_CUDA(cudaStreamWaitEvent(stream, copied[b], 0));
    if (begin + length < n) {  // the next piece, into the other buffer once it is walked
      if (k) PF_FSM_CUDA(cudaStreamWaitEvent(copies, walked[1 - b], 0));
      buffers[1 - b].upload(host_data + begin + length, std::min(piece, n - begin - length),
                            copies);
      PF_FSM_CUDA(cudaEventRecord(copied[1 - b], copies));
    }
    std::string later;  // the reason tells of the first piece's validation, and of a switch
    const std::string before = plan.scheme;
    walk_piece(plan, tables, t, buffers[b].get(), length, begin,
               gpu_chunks(plan.scheme, length, options.chunks), options.matches, stream, totals,
               k ? later : reason);
    if (k && plan.scheme != before) reason += "; piece " + std::to_string(k + 1) + later;
    PF_FSM_CUDA(cudaEventRecord(walked[b], stream));
  }
  if (n > piece) reason += "; " + std::to_string((n + piece - 1) / piece) + " pieces";
  PF_FSM_CUDA(cudaStreamSynchronize(copies));
}

// The machine over data[0, n), its work queued on `stream`: device memory (`on_device`, walked
// where it is, one piece) or host memory (in pieces).
inline RunResult run_machine_on(const Tables& t, const uint8_t* data, size_t n,
                                const RunOptions& options, bool on_device, cudaStream_t stream) {
  RunResult result;
  GpuPlan plan = gpu_plan(t, options.scheme, result.reason);
  const size_t piece = on_device ? n : std::min(n, piece_bytes());
  const size_t chunks = gpu_chunks(plan.scheme, piece, options.chunks);
  result.threads = int(chunks);
  result.chunks = chunks;
  result.entry_bytes = int(t.entry_bytes);
  const uint32_t reporting = t.reporting_states();
  std::vector<unsigned long long> visits(reporting, 0);
  uint32_t final_offset = t.start << t.shift;
  if (n) {
    UploadedTables tables(t, stream);
    PhaseClock clock(options.profile, stream, result.phases);
    PieceTotals totals{DeviceArray<unsigned long long>(std::max<uint32_t>(reporting, 1)), {},
                       t.start << t.shift};
    totals.visits.zero(stream);
    if (on_device)
      walk_piece(plan, tables, t, data, n, 0, chunks, options.matches, stream, totals,
                 result.reason);
    else
      walk_in_pieces(plan, tables, t, data, n, piece, options, stream, clock, totals,
                     result.reason);
    visits = totals.visits.download(reporting, stream);
    final_offset = totals.state;
    result.matches = std::move(totals.matches);
    clock.lap(n == piece ? "on the device" : "pieces, copied while walked", true);
  }
  result.scheme = plan.scheme;  // enum where auto's speculation did not settle
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

// `on_device`: `data` is device memory, walked where it is (no pieces, no copies) once the
// device has finished what was queued before (whichever stream writes it); else host memory.
inline RunResult run_machine_cuda(const Tables& t, const uint8_t* data, size_t n,
                                  const RunOptions& options, bool on_device = false) {
  if (n && on_device) PF_FSM_CUDA(cudaDeviceSynchronize());
  RunStream stream;
  return run_machine_on(t, data, n, options, on_device, stream);
}

}  // namespace parafuse::fsm::cuda
