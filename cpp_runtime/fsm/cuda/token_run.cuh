// parafuse boostfsm on GPUs: one run of a token set, with the TokenRunOptions and
// TokenRunResult of the CPU schemes (fsm/tokens/schemes.hpp). Schemes:
//   seq    one device thread tokenizes the whole input
//   spec   every chunk from a lookback guess, re-validated in up to kRounds parallel rounds,
//          then the chunks still wrong settled in order by one thread
//   auto   spec
// Then every chunk is tokenized from its true entry to count its tokens per kind and, for
// the list, again to write them where a scan of the chunks' counts puts them. The whole
// input is in device memory at once (token sets are not run in pieces yet).
//
// A thread that runs past its budget of bytes read (token_tables.cuh: only a token set with
// rules that may never close has one) voids the device's result: the input is then
// tokenized on the host in one pass, with Reps' memo, and the reason says why.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "fsm/cuda/run.cuh"
#include "fsm/cuda/token_kernels.cuh"
#include "fsm/tokens/run_options.hpp"
#include "fsm/tokens/tokenizer.hpp"

namespace parafuse::fsm::cuda {

// Bytes one thread may read per kernel, where rules may never close: kRereadChunks times
// its chunk, and kRereadFloor more.
constexpr uint64_t kRereadChunks = 64, kRereadFloor = uint64_t(1) << 20;

inline std::string gpu_token_scheme(const std::string& asked, std::string& reason) {
  if (asked == "auto") {
    reason = "auto: a token set's chunks start from lookback guesses on the GPU (spec)";
    return "spec";
  }
  if (asked != "seq" && asked != "spec")
    throw std::runtime_error("scheme '" + asked + "' does not run a token set on the GPU "
                             "(seq, spec, auto)");
  reason = "as requested";
  return asked;
}

// The chunks' true entries (device memory) of `scheme`; `over` counts voided threads.
inline void find_entries(const std::string& scheme, const DeviceTokenTables& t,
                         const TokenTables& host, const uint8_t* data, size_t n, size_t chunks,
                         uint64_t budget, uint64_t* entries, unsigned long long* over,
                         cudaStream_t stream, std::string& reason) {
  const unsigned grid = blocks_for(chunks);
  if (scheme == "seq") {
    PF_FSM_CUDA(cudaMemsetAsync(entries, 0, sizeof(uint64_t), stream));
    return;
  }
  DeviceArray<uint64_t> exits(chunks), old(chunks);
  DeviceArray<uint8_t> wrong(chunks);
  DeviceArray<unsigned long long> wrong_count(1);
  PF_FSM_LAUNCH(speculate_token_chunks, grid, kBlockThreads, stream, t, data, n, chunks,
                host.lookback, budget, entries, exits.get(), over);
  int rounds = 0;
  bool settled = false;
  for (; rounds < kRounds && !settled; ++rounds) {
    wrong_count.zero(stream);
    PF_FSM_LAUNCH(mark_wrong_entries, grid, kBlockThreads, stream, chunks, entries, exits.get(),
                  old.get(), wrong.get(), wrong_count.get());
    PF_FSM_CUDA(cudaGetLastError());
    settled = wrong_count.at(0, stream) == 0;
    if (!settled)
      PF_FSM_LAUNCH(rewalk_entries, grid, kBlockThreads, stream, t, data, n, chunks, budget,
                    entries, old.get(), wrong.get(), exits.get(), over);
  }
  reason += "; " + std::to_string(rounds) + " re-validation round" + (rounds == 1 ? "" : "s");
  if (settled) return;
  wrong_count.zero(stream);
  PF_FSM_LAUNCH(settle_entries, 1, 1, stream, t, data, n, chunks, budget, entries, exits.get(),
                wrong_count.get(), over);
  PF_FSM_CUDA(cudaGetLastError());
  reason += ", then " + std::to_string(wrong_count.at(0, stream)) + " of " +
            std::to_string(chunks) + " chunks tokenized in order";
}

// The host's tokenization, in one pass (a voided device run).
template <class OutToken>
void tokenize_on_host(const TokenTables& t, const uint8_t* data, size_t n,
                      std::vector<OutToken>* tokens, std::vector<uint64_t>& counts) {
  Tokenizer tokenizer(t, data, n);
  Token token;
  for (size_t p = 0; p < n;) {
    p = tokenizer.next_token(p, token);
    if (token.kind == kSkipToken) continue;
    ++counts[token.kind];
    if (tokens) tokens->push_back(OutToken{token.start, token.end, token.kind});
  }
}

// Tokenize data[0, n): host memory, or (`on_device`) device memory, walked where it is once
// the device has finished what was queued before. `reread_bytes`: a thread's budget where
// rules may never close (0: kRereadChunks times its chunk, and kRereadFloor more).
template <class OutToken>
TokenRunResult run_token_set_cuda(const TokenTables& t, const uint8_t* data, size_t n,
                                  const TokenRunOptions& options, std::vector<OutToken>* tokens,
                                  bool on_device = false, uint64_t reread_bytes = 0) {
  static_assert(sizeof(OutToken) == sizeof(DeviceToken), "a token is 24 bytes");
  TokenRunResult result;
  result.scheme = gpu_token_scheme(options.scheme, result.reason);
  const size_t chunks = gpu_chunks(result.scheme, n, options.chunks);
  result.threads = int(chunks);
  result.counts.assign(t.kind_count, 0);
  result.exit = n;
  if (tokens) tokens->clear();
  if (n == 0) return result;
  if (on_device) PF_FSM_CUDA(cudaDeviceSynchronize());
  const uint64_t budget = !t.needs_memo ? ~uint64_t(0)
                          : reread_bytes ? reread_bytes
                                         : kRereadChunks * (n / chunks + 1) + kRereadFloor;
  RunStream stream;
  UploadedTokenTables tables(t, stream);
  const DeviceTokenTables view = tables.view();
  DeviceArray<uint8_t> copy(on_device ? 0 : n);
  copy.upload(data, on_device ? 0 : n, stream);
  const uint8_t* input = on_device ? data : copy.get();
  DeviceArray<uint64_t> entries(chunks);
  DeviceArray<unsigned long long> over(1), counts(t.kind_count), token_counts(chunks);
  over.zero(stream);
  counts.zero(stream);
  find_entries(result.scheme, view, t, input, n, chunks, budget, entries.get(), over.get(),
               stream, result.reason);
  PF_FSM_LAUNCH(count_token_chunks, blocks_for(chunks), kBlockThreads, stream, view, input, n,
                chunks, budget, entries.get(), counts.get(), tokens ? token_counts.get() : nullptr,
                over.get());
  PF_FSM_CUDA(cudaGetLastError());
  if (over.at(0, stream)) {
    result.reason += "; a device thread read past its budget of " + std::to_string(budget) +
                     " bytes (a token that may never close, read again from many positions): "
                     "tokenized on the host in one pass";
    std::vector<uint8_t> host(on_device ? n : 0);
    if (on_device) PF_FSM_CUDA(cudaMemcpy(host.data(), data, n, cudaMemcpyDeviceToHost));
    tokenize_on_host(t, on_device ? host.data() : data, n, tokens, result.counts);
    return result;
  }
  const std::vector<unsigned long long> kinds = counts.download(t.kind_count, stream);
  std::copy(kinds.begin(), kinds.end(), result.counts.begin());
  if (!tokens) return result;
  DeviceArray<unsigned long long> first(chunks + 1);
  PF_FSM_LAUNCH(scan_counts, 1, kScanThreads, stream, token_counts.get(), chunks, first.get());
  PF_FSM_CUDA(cudaGetLastError());
  const unsigned long long total = first.at(chunks, stream);
  DeviceArray<DeviceToken> found(total);
  PF_FSM_LAUNCH(write_token_chunks, blocks_for(chunks), kBlockThreads, stream, view, input, n,
                chunks, budget, entries.get(), first.get(), found.get());
  PF_FSM_CUDA(cudaGetLastError());
  tokens->resize(total);
  if (total)
    PF_FSM_CUDA(cudaMemcpyAsync(tokens->data(), found.get(), total * sizeof(DeviceToken),
                                cudaMemcpyDeviceToHost, stream));
  PF_FSM_CUDA(cudaStreamSynchronize(stream));
  return result;
}

}  // namespace parafuse::fsm::cuda
