// parafuse boostfsm on GPUs: one run of a token set, with the TokenRunOptions and
// TokenRunResult of the CPU schemes (fsm/tokens/schemes.hpp). Schemes:
//   seq    one device thread tokenizes the whole input
//   spec   every chunk from a lookback guess, re-validated in up to kRounds parallel rounds,
//          then the chunks still wrong settled in order by one thread
//   auto   spec
// Then every chunk is tokenized from its true entry to count its tokens per kind and, for
// the list, again to write them where a scan of the chunks' counts puts them. A host input
// goes to the device in pieces (run.cuh piece_bytes); a piece ends before the first token
// whose scan reached its end (the token may go on), and the next piece starts there (or,
// where that is its first token, the piece grows to twice its bytes, up to the rest).
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
#include "fsm/cuda/token_pieces.cuh"
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
                         const TokenTables& host, const TokenInput& in, size_t chunks,
                         uint64_t* entries, unsigned long long* over, cudaStream_t stream,
                         std::string& reason) {
  const unsigned grid = blocks_for(chunks);
  if (scheme == "seq") {
    PF_FSM_CUDA(cudaMemsetAsync(entries, 0, sizeof(uint64_t), stream));
    return;
  }
  DeviceArray<uint64_t> exits(chunks), old(chunks);
  DeviceArray<uint8_t> wrong(chunks);
  DeviceArray<unsigned long long> wrong_count(1);
  PF_FSM_LAUNCH(speculate_token_chunks, grid, kBlockThreads, stream, t, in, chunks,
                host.lookback, entries, exits.get(), over);
  int rounds = 0;
  bool settled = false;
  for (; rounds < kRounds && !settled; ++rounds) {
    wrong_count.zero(stream);
    PF_FSM_LAUNCH(mark_wrong_entries, grid, kBlockThreads, stream, chunks, entries, exits.get(),
                  old.get(), wrong.get(), wrong_count.get());
    PF_FSM_CUDA(cudaGetLastError());
    settled = wrong_count.at(0, stream) == 0;
    if (!settled)
      PF_FSM_LAUNCH(rewalk_entries, grid, kBlockThreads, stream, t, in, chunks, entries, old.get(),
                    wrong.get(), exits.get(), over);
  }
  reason += "; " + std::to_string(rounds) + " re-validation round" + (rounds == 1 ? "" : "s");
  if (settled) return;
  wrong_count.zero(stream);
  PF_FSM_LAUNCH(settle_entries, 1, 1, stream, t, in, chunks, entries, exits.get(),
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

// One piece, `in`, of the input from `base`: its tokens that start before the returned stop
// (the piece's end, or for a truncated piece the first token whose scan reached its end)
// added to `counts` and, where asked, to `tokens`. Returns ~0 where a thread ran past its
// budget (nothing is added then).
template <class OutToken>
uint64_t tokenize_piece(const std::string& scheme, const DeviceTokenTables& view,
                        const TokenTables& t, const TokenInput& in, uint64_t base, size_t chunks,
                        std::vector<uint64_t>& counts, std::vector<OutToken>* tokens,
                        cudaStream_t stream, std::string& reason) {
  DeviceArray<uint64_t> entries(chunks);
  DeviceArray<unsigned long long> over(1), stop(1), kind_counts(t.kind_count),
      token_counts(chunks);
  over.zero(stream);
  kind_counts.zero(stream);
  find_entries(scheme, view, t, in, chunks, entries.get(), over.get(), stream, reason);
  uint64_t piece_stop = in.n;
  if (in.truncated) {
    PF_FSM_CUDA(cudaMemcpyAsync(stop.get(), &piece_stop, sizeof piece_stop, cudaMemcpyHostToDevice,
                                stream));
    PF_FSM_LAUNCH(find_piece_stop, blocks_for(chunks), kBlockThreads, stream, view, in, chunks,
                  entries.get(), stop.get(), over.get());
    piece_stop = stop.at(0, stream);  // (waits: `piece_stop` was copied from)
  }
  PF_FSM_LAUNCH(count_token_chunks, blocks_for(chunks), kBlockThreads, stream, view, in, chunks,
                piece_stop, entries.get(), kind_counts.get(),
                tokens ? token_counts.get() : nullptr, over.get());
  PF_FSM_CUDA(cudaGetLastError());
  if (over.at(0, stream)) return ~uint64_t(0);
  const std::vector<unsigned long long> kinds = kind_counts.download(t.kind_count, stream);
  for (uint32_t kind = 0; kind < t.kind_count; ++kind) counts[kind] += kinds[kind];
  if (!tokens) return piece_stop;
  DeviceArray<unsigned long long> first(chunks + 1);
  PF_FSM_LAUNCH(scan_counts, 1, kScanThreads, stream, token_counts.get(), chunks, first.get());
  PF_FSM_CUDA(cudaGetLastError());
  const unsigned long long total = first.at(chunks, stream);
  DeviceArray<DeviceToken> found(total);
  PF_FSM_LAUNCH(write_token_chunks, blocks_for(chunks), kBlockThreads, stream, view, in, chunks,
                piece_stop, base, entries.get(), first.get(), found.get());
  PF_FSM_CUDA(cudaGetLastError());
  const size_t had = tokens->size();
  tokens->resize(had + total);
  if (total)
    PF_FSM_CUDA(cudaMemcpyAsync(tokens->data() + had, found.get(), total * sizeof(DeviceToken),
                                cudaMemcpyDeviceToHost, stream));
  PF_FSM_CUDA(cudaStreamSynchronize(stream));
  return piece_stop;
}

// Tokenize data[0, n): host memory, in pieces (TokenPieces, of piece_bytes(): run.cuh), or
// (`on_device`) device memory, walked where it is once the device has finished what was
// queued before. A piece ends before its first token whose scan reached its end, and the next
// piece starts there. `reread_bytes`: a thread's budget where rules may never close (0:
// kRereadChunks times its chunk, and kRereadFloor more).
template <class OutToken>
TokenRunResult run_token_set_cuda(const TokenTables& t, const uint8_t* data, size_t n,
                                  const TokenRunOptions& options, std::vector<OutToken>* tokens,
                                  bool on_device = false, uint64_t reread_bytes = 0) {
  static_assert(sizeof(OutToken) == sizeof(DeviceToken), "a token is 24 bytes");
  TokenRunResult result;
  result.scheme = gpu_token_scheme(options.scheme, result.reason);
  const uint64_t piece = on_device ? n : std::min(n, piece_bytes());
  const size_t chunks = gpu_chunks(result.scheme, piece, options.chunks);
  result.threads = int(chunks);
  result.counts.assign(t.kind_count, 0);
  result.exit = n;
  if (tokens) tokens->clear();
  if (n == 0) return result;
  if (on_device) PF_FSM_CUDA(cudaDeviceSynchronize());
  RunStream stream;
  UploadedTokenTables tables(t, stream);
  const auto budget_for = [&](uint64_t length, size_t piece_chunks) {
    return !t.needs_memo ? ~uint64_t(0)
           : reread_bytes ? reread_bytes
                          : kRereadChunks * (length / piece_chunks + 1) + kRereadFloor;
  };
  uint64_t stop = 0, budget = 0, pieces = 0;
  if (on_device) {
    budget = budget_for(n, chunks);
    stop = tokenize_piece(result.scheme, tables.view(), t, TokenInput{data, n, budget, false}, 0,
                          chunks, result.counts, tokens, stream, result.reason);
    pieces = 1;
  } else {
    TokenPieces in_pieces(data, n, piece, stream);
    for (; in_pieces.base() < n && stop != ~uint64_t(0); ++pieces) {
      const uint64_t length = std::min<uint64_t>(n - in_pieces.base(), piece);  // for sizing
      const size_t piece_chunks = gpu_chunks(result.scheme, length, options.chunks);
      budget = budget_for(length, piece_chunks);
      const TokenInput in = in_pieces.input(budget);
      std::string later;  // the reason tells of the first piece's validation alone
      stop = tokenize_piece(result.scheme, tables.view(), t, in, in_pieces.base(),
                            gpu_chunks(result.scheme, in.n, options.chunks), result.counts,
                            tokens, stream, pieces ? later : result.reason);
      if (stop != ~uint64_t(0)) in_pieces.advance(stop);
    }
    if (in_pieces.longest() > piece)
      result.reason += "; a piece grew to " + std::to_string(in_pieces.longest()) +
                       " bytes to hold a token that reads past it";
  }
  if (stop == ~uint64_t(0)) {  // a thread past its budget
    result.reason += "; a device thread read past its budget of " + std::to_string(budget) +
                     " bytes (a token that may never close, read again from many positions): "
                     "tokenized on the host in one pass";
    std::vector<uint8_t> host(on_device ? n : 0);
    if (on_device) PF_FSM_CUDA(cudaMemcpy(host.data(), data, n, cudaMemcpyDeviceToHost));
    result.counts.assign(t.kind_count, 0);
    if (tokens) tokens->clear();
    tokenize_on_host(t, on_device ? host.data() : data, n, tokens, result.counts);
    return result;
  }
  if (pieces > 1) result.reason += "; " + std::to_string(pieces) + " pieces";
  return result;
}

}  // namespace parafuse::fsm::cuda
