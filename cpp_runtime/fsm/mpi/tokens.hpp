// parafuse boostfsm runtime: one token set over one file across the ranks of an MPI
// communicator (docs/fsm-language.md section 8, "Beyond one machine"; docs/fsm.md,
// "Token sets under MPI").
//
// Rank r owns the tokens that start in its byte range [n*r/R, n*(r+1)/R). It maps the
// file from `lookback` bytes before its range to the file's end (a token, or a comment
// that never closes, may run past the range; mapping is lazy, so only what is read is
// paged in), guesses its first token boundary by tokenizing the lookback bytes (rank 0
// starts at 0), and tokenizes its range with its threads and scheme. Then, in rounds, the
// ranks exchange (entry, exit) with MPI_Allgather: the chain of true entries is confirmed
// up to the first rank whose entry differs from its predecessor's exit, and every later
// rank whose entry differs re-tokenizes from that exit until a token starts where one of
// its own starts (the two tokenizations fall in step there; the rest is kept). A
// predecessor's exit past the whole range (a token spanning ranks) leaves the rank empty.
// Each round confirms at least one more rank: at most R rounds, and the result is exact.
// Counts are summed on rank 0; tokens, when asked for, gathered to it in rank order.
//
// A rank that cannot read the file makes every rank throw the same error (the first
// failing rank's message), so that all exit together and rank 0 alone prints it.
#pragma once

#include <fcntl.h>
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "fsm/mpi/range.hpp"
#include "fsm/mpi/run.hpp"
#include "fsm/tokens/schemes.hpp"

namespace parafuse::fsm {
inline namespace v1 {

struct TokenMpiOutcome {  // on rank 0: the whole file's result; elsewhere: this rank's part
  TokenRunResult whole;
  uint64_t bytes = 0, rerun_bytes = 0;
  int ranks = 1, rounds = 0, reruns = 0;
};

namespace token_mpi {

// The file's size, the same on every rank (else every rank throws alike).
inline size_t agreed_size(MPI_Comm comm, const std::string& path, int& fd) {
  if (path == "-")
    throw std::runtime_error("under mpirun, INPUT must be a file every rank can read");
  std::string error;
  fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat info {};
  if (fd < 0 || ::fstat(fd, &info) != 0) error = std::strerror(errno);
  else if (!S_ISREG(info.st_mode)) error = "not a regular file";
  if (!error.empty()) error = "cannot read input '" + path + "': " + error;
  if (!error.empty() && fd >= 0) ::close(fd), fd = -1;
  agree_or_throw(comm, error);
  uint64_t size = uint64_t(info.st_size), low = 0, high = 0;
  MPI_Allreduce(&size, &low, 1, MPI_UINT64_T, MPI_MIN, comm);
  MPI_Allreduce(&size, &high, 1, MPI_UINT64_T, MPI_MAX, comm);
  if (low != high) {
    ::close(fd);
    throw std::runtime_error("the ranks see different sizes of '" + path + "'");
  }
  return size_t(size);
}

// Tokens of every rank to rank 0, in rank order (positions already in file offsets).
template <class OutToken>
void gather_tokens_to_root(MPI_Comm comm, const std::vector<Token>& mine,
                           std::vector<OutToken>& out) {
  static_assert(sizeof(OutToken) == sizeof(Token), "a token is a 24-byte record");
  int ranks = 0, rank = 0;
  MPI_Comm_size(comm, &ranks);
  MPI_Comm_rank(comm, &rank);
  uint64_t count = mine.size();
  std::vector<uint64_t> sizes(static_cast<size_t>(ranks), 0);
  MPI_Allgather(&count, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, comm);
  std::vector<int> counts(static_cast<size_t>(ranks)), offsets(static_cast<size_t>(ranks));
  uint64_t total = 0;
  for (int r = 0; r < ranks; ++r)
    counts[size_t(r)] = int(sizes[size_t(r)]), offsets[size_t(r)] = int(total),
    total += sizes[size_t(r)];
  if (total > uint64_t(INT_MAX))  // every rank knows: all throw alike
    throw std::runtime_error("too many tokens to gather on rank 0 (more than 2^31 - 1)");
  MPI_Datatype record;
  MPI_Type_contiguous(int(sizeof(Token)), MPI_BYTE, &record);
  MPI_Type_commit(&record);
  if (rank == 0) out.resize(size_t(total));
  MPI_Gatherv(mine.data(), int(count), record, rank == 0 ? out.data() : nullptr, counts.data(),
              offsets.data(), record, 0, comm);
  MPI_Type_free(&record);
  if (rank != 0) {
    out.resize(mine.size());
    for (size_t i = 0; i < mine.size(); ++i)
      out[i] = OutToken{mine[i].start, mine[i].end, mine[i].kind};
  }
}

}  // namespace token_mpi

// Tokenize the file `path` across the ranks of `comm` (a collective call; see the top).
// `tokens` (when given) gets the whole file's tokens on rank 0, this rank's elsewhere.
template <class OutToken = Token>
TokenMpiOutcome run_token_ranks(MPI_Comm comm, const std::string& path, const TokenTables& t,
                                const TokenRunOptions& options, std::vector<OutToken>* tokens) {
  int ranks = 0, rank = 0;
  MPI_Comm_size(comm, &ranks);
  MPI_Comm_rank(comm, &rank);
  int fd = -1;
  const size_t n = token_mpi::agreed_size(comm, path, fd);
  const size_t begin = size_t((unsigned __int128)n * unsigned(rank) / unsigned(ranks));
  const size_t end = size_t((unsigned __int128)n * unsigned(rank + 1) / unsigned(ranks));
  const size_t window = std::min<size_t>(begin, t.lookback), low = begin - window;
  std::string error;
  std::unique_ptr<MappedRange> mapped;
  try {
    mapped = std::make_unique<MappedRange>(fd, low, n);
  } catch (const std::exception& failure) {
    error = "cannot map input '" + path + "': " + failure.what();
  }
  ::close(fd);
  agree_or_throw(comm, error);
  // Positions below are relative to `low` (the mapping's first byte) until the gather.
  const uint8_t* data = mapped->data();
  const size_t local_n = n - low;
  Tokenizer tokenizer(t, data, local_n);
  TokenChunk chunk;
  chunk.begin = window;
  chunk.end = end - low;
  chunk.entry = rank == 0 ? 0 : lookback_entry(tokenizer, chunk.begin, t.lookback, local_n);
  TokenRunOptions local = options;
  local.from = chunk.entry;
  local.stop = chunk.end;
  TokenMpiOutcome outcome;
  outcome.whole = run_token_set(t, data, local_n, local, &chunk.tokens);
  chunk.exit = outcome.whole.exit;
  outcome.ranks = ranks;
  std::vector<uint64_t> pair(2), pairs(2 * size_t(ranks));
  for (;;) {  // rounds of speculation across ranks
    ++outcome.rounds;
    pair = {chunk.entry + low, chunk.exit + low};
    MPI_Allgather(pair.data(), 2, MPI_UINT64_T, pairs.data(), 2, MPI_UINT64_T, comm);
    uint64_t truth = 0;
    int confirmed = 0;
    while (confirmed < ranks && pairs[2 * size_t(confirmed)] == truth)
      truth = pairs[2 * size_t(confirmed) + 1], ++confirmed;
    if (confirmed == ranks) break;
    for (int r = std::max(confirmed, 1); r < ranks; ++r)
      outcome.reruns += pairs[2 * size_t(r)] != pairs[2 * size_t(r) - 1];
    if (rank >= confirmed && rank > 0 && pairs[2 * size_t(rank) - 1] != pair[0])
      rerun_chunk(tokenizer, chunk, size_t(pairs[2 * size_t(rank) - 1] - low), local_n);
  }
  std::vector<uint64_t> counts(t.kind_count, 0);
  for (Token& token : chunk.tokens) {
    ++counts[token.kind];
    token.start += low, token.end += low;
  }
  outcome.whole.counts.assign(t.kind_count, 0);
  MPI_Reduce(counts.data(), outcome.whole.counts.data(), int(t.kind_count), MPI_UINT64_T,
             MPI_SUM, 0, comm);
  if (rank != 0) outcome.whole.counts = counts;
  MPI_Reduce(&chunk.rerun_bytes, &outcome.rerun_bytes, 1, MPI_UINT64_T, MPI_SUM, 0, comm);
  if (tokens) token_mpi::gather_tokens_to_root(comm, chunk.tokens, *tokens);
  outcome.whole.exit = rank == 0 ? n : chunk.exit + low;
  outcome.bytes = n;
  return outcome;
}

}  // namespace v1
}  // namespace parafuse::fsm
