// parafuse boostfsm runtime: one machine over one file across the ranks of an MPI
// communicator (docs/fsm-language.md section 8, "Beyond one machine"). Each rank maps its
// own byte range [n*r/R, n*(r+1)/R) of the file (plus the bytes before it that predict its
// start state) and runs it with the machine's library, threads and scheme as asked.
//
// Speculation across ranks: rank 0 starts in the machine's start state, every other rank
// in the state predicted by running the kLookback bytes before its range from every state
// (the most frequent end state; from the start state alone for big machines). Then, in
// rounds, the ranks exchange (start used, state after) with MPI_Allgather; the chain of
// true starts is confirmed up to the first rank whose start was wrong, and every later
// rank whose start differs from its predecessor's latest end runs again from it. Each
// round confirms at least one more rank, so there are at most R rounds, and the result
// is exact. Counts are summed on rank 0 (MPI_Reduce) and matches gathered in rank order,
// which is offset order (MPI_Gatherv).
//
// A rank that cannot read the file makes every rank throw the same error (first failing
// rank's message), so that all exit together and rank 0 alone prints it.
#pragma once

#include <fcntl.h>
#include <mpi.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace parafuse::fsm {
inline namespace v1 {

constexpr size_t kMpiLookback = 64, kMpiPredictRuns = 1024, kMpiMessage = 512;

// One run of the machine over a range from `start` (a state number of the machine).
struct RangeRun {
  uint32_t final_state = 0;
  std::vector<uint64_t> counts;
  std::vector<std::pair<uint64_t, uint32_t>> matches;  // offsets within the range
  std::string scheme, reason;
  int threads = 1;
};
// (data, n, start, full): full runs as the options ask; others are short predictions.
using RunRange = std::function<RangeRun(const uint8_t*, size_t, uint32_t, bool)>;

struct MpiOutcome {  // on rank 0: the whole file's result; elsewhere: this rank's part
  RangeRun whole;
  uint64_t bytes = 0;
  int ranks = 1, rounds = 0, reruns = 0;
};

// The bytes [begin, end) of a file, mapped.
class MappedRange {
 public:
  MappedRange(int fd, size_t begin, size_t end) {
    if (end <= begin) return;
    const size_t page = size_t(::sysconf(_SC_PAGESIZE)), aligned = begin / page * page;
    length_ = end - aligned;
    void* mapped = ::mmap(nullptr, length_, PROT_READ, MAP_PRIVATE, fd, off_t(aligned));
    if (mapped == MAP_FAILED) throw std::runtime_error(std::strerror(errno));
    base_ = static_cast<const uint8_t*>(mapped);
    data_ = base_ + (begin - aligned);
  }
  MappedRange(const MappedRange&) = delete;
  MappedRange& operator=(const MappedRange&) = delete;
  ~MappedRange() {
    if (base_) ::munmap(const_cast<uint8_t*>(base_), length_);
  }
  const uint8_t* data() const { return data_; }

 private:
  const uint8_t* base_ = nullptr;
  const uint8_t* data_ = nullptr;
  size_t length_ = 0;
};

namespace detail {
// Every rank's error, or none: all ranks learn the first failing rank's message.
inline void agree_or_throw(MPI_Comm comm, const std::string& mine) {
  int ranks = 0, rank = 0;
  MPI_Comm_size(comm, &ranks);
  MPI_Comm_rank(comm, &rank);
  int failed = mine.empty() ? 0 : 1, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm);
  if (!any) return;
  std::vector<char> text(kMpiMessage, 0), all(kMpiMessage * size_t(ranks), 0);
  std::memcpy(text.data(), mine.data(), std::min(mine.size(), kMpiMessage - 1));
  MPI_Allgather(text.data(), int(kMpiMessage), MPI_CHAR, all.data(), int(kMpiMessage), MPI_CHAR,
                comm);
  for (int r = 0; r < ranks; ++r)
    if (all[size_t(r) * kMpiMessage])
      throw std::runtime_error("rank " + std::to_string(r) + ": " +
                               std::string(all.data() + size_t(r) * kMpiMessage));
}

inline uint32_t predict_start(const RunRange& run, const uint8_t* window, size_t length,
                              uint32_t states, uint32_t start) {
  if (size_t(states) > kMpiPredictRuns) return run(window, length, start, false).final_state;
  std::map<uint32_t, uint32_t> ends;  // end state -> how many starts reach it
  for (uint32_t s = 0; s < states; ++s) ++ends[run(window, length, s, false).final_state];
  return std::max_element(ends.begin(), ends.end(), [](const auto& a, const auto& b) {
           return a.second < b.second;  // ties: the smallest state (first in the map)
         })->first;
}
}  // namespace detail

inline MpiOutcome run_ranks(MPI_Comm comm, const std::string& path, uint32_t states,
                            uint32_t start, size_t tags, const RunRange& run) {
  int ranks = 0, rank = 0;
  MPI_Comm_size(comm, &ranks);
  MPI_Comm_rank(comm, &rank);
  if (path == "-") throw std::runtime_error("under mpirun, INPUT must be a file every rank can read");
  std::string error;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat info {};
  if (fd < 0 || ::fstat(fd, &info) != 0) error = std::strerror(errno);
  else if (!S_ISREG(info.st_mode)) error = "not a regular file";
  if (!error.empty()) error = "cannot read input '" + path + "': " + error;
  uint64_t size = error.empty() ? uint64_t(info.st_size) : 0, low = 0, high = 0;
  detail::agree_or_throw(comm, error);
  MPI_Allreduce(&size, &low, 1, MPI_UINT64_T, MPI_MIN, comm);
  MPI_Allreduce(&size, &high, 1, MPI_UINT64_T, MPI_MAX, comm);
  if (low != high) throw std::runtime_error("the ranks see different sizes of '" + path + "'");
  const size_t n = size_t(size);
  const size_t begin = size_t((unsigned __int128)n * unsigned(rank) / unsigned(ranks));
  const size_t end = size_t((unsigned __int128)n * unsigned(rank + 1) / unsigned(ranks));
  const size_t window = std::min(begin, kMpiLookback);
  std::unique_ptr<MappedRange> mapped;
  try {
    mapped = std::make_unique<MappedRange>(fd, begin - window, end);
  } catch (const std::exception& failure) {
    error = "cannot map input '" + path + "': " + failure.what();
  }
  if (fd >= 0) ::close(fd);
  detail::agree_or_throw(comm, error);
  const uint8_t* bytes = mapped->data() ? mapped->data() + window : nullptr;
  uint32_t guess = rank == 0 || window == 0 ? start
                   : detail::predict_start(run, mapped->data(), window, states, start);
  RangeRun mine = run(bytes, end - begin, guess, true);
  MpiOutcome outcome;
  outcome.ranks = ranks;
  std::vector<uint32_t> mine_pair(2), pairs(2 * size_t(ranks));
  for (;;) {  // rounds of speculation across ranks
    ++outcome.rounds;
    mine_pair = {guess, mine.final_state};
    MPI_Allgather(mine_pair.data(), 2, MPI_UINT32_T, pairs.data(), 2, MPI_UINT32_T, comm);
    uint32_t state = start;
    int confirmed = 0;
    while (confirmed < ranks && pairs[2 * size_t(confirmed)] == state)
      state = pairs[2 * size_t(confirmed) + 1], ++confirmed;
    if (confirmed == ranks) break;
    for (int r = std::max(confirmed, 1); r < ranks; ++r)
      outcome.reruns += pairs[2 * size_t(r)] != pairs[2 * size_t(r) - 1];
    if (rank >= confirmed && rank > 0 && pairs[2 * size_t(rank) - 1] != guess) {
      guess = pairs[2 * size_t(rank) - 1];
      mine = run(bytes, end - begin, guess, true);
    }
  }
  outcome.whole = mine;
  outcome.whole.final_state = pairs.back();
  outcome.bytes = n;
  outcome.whole.counts.assign(tags, 0);
  mine.counts.resize(tags, 0);
  MPI_Reduce(mine.counts.data(), outcome.whole.counts.data(), int(tags), MPI_UINT64_T, MPI_SUM, 0,
             comm);
  // Matches as (offset in the file, tag) pairs of u64, gathered in rank order.
  std::vector<uint64_t> flat;
  flat.reserve(2 * mine.matches.size());
  for (const auto& match : mine.matches) flat.push_back(match.first + begin), flat.push_back(match.second);
  uint64_t count = flat.size();
  std::vector<uint64_t> sizes(static_cast<size_t>(ranks));
  MPI_Allgather(&count, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, comm);
  std::vector<int> counts(static_cast<size_t>(ranks)), offsets(static_cast<size_t>(ranks));
  uint64_t total = 0;
  for (int r = 0; r < ranks; ++r)
    counts[size_t(r)] = int(sizes[size_t(r)]), offsets[size_t(r)] = int(total), total += sizes[size_t(r)];
  if (total > uint64_t(1) << 30)  // every rank knows: all throw alike
    throw std::runtime_error("too many matches to gather on rank 0 (more than 2^29)");
  std::vector<uint64_t> gathered(rank == 0 ? total : 0);
  MPI_Gatherv(flat.data(), int(count), MPI_UINT64_T, gathered.data(), counts.data(), offsets.data(),
              MPI_UINT64_T, 0, comm);
  outcome.whole.matches.clear();
  for (size_t i = 0; i + 1 < gathered.size(); i += 2)
    outcome.whole.matches.emplace_back(gathered[i], uint32_t(gathered[i + 1]));
  return outcome;
}

}  // namespace v1
}  // namespace parafuse::fsm
