// parafuse boostfsm runtime: one rank's byte range of a file under MPI (docs/fsm-language.md
// section 8, "Beyond one machine"), and the collectives every MPI run ends with.
//
// Rank r of R maps the bytes [n*r/R, n*(r+1)/R) of the file plus up to `lookback` bytes
// before them (which predict a machine's start state, or restart a bounded NFA exactly).
// A rank that cannot read the file makes every rank throw the same error (the first
// failing rank's message), so that all exit together and rank 0 alone prints it. Counts
// are summed on rank 0 (MPI_Reduce); matches are gathered there in rank order
// (MPI_Gatherv) and sorted by offset, then tag, as one process reports them.
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
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "fsm/core/walk.hpp"

namespace parafuse::fsm {
inline namespace v1 {

constexpr size_t kMpiLookback = 64, kMpiMessage = 512;

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

// Every rank's error, or none: all ranks learn the first failing rank's message.
inline void agree_or_throw(MPI_Comm comm, const std::string& mine) {
  int ranks = 0;
  MPI_Comm_size(comm, &ranks);
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

// This rank's part of the file: [begin, end) of n bytes, and `window` bytes before it.
struct RankInput {
  MPI_Comm comm = MPI_COMM_NULL;
  int ranks = 1, rank = 0;
  size_t n = 0, begin = 0, end = 0, window = 0;
  std::unique_ptr<MappedRange> mapped;  // [begin - window, end)
  size_t length() const { return end - begin; }
  bool last() const { return rank + 1 == ranks; }
  const uint8_t* before() const { return mapped->data(); }  // at begin - window
  const uint8_t* bytes() const { return mapped->data() ? mapped->data() + window : nullptr; }
};

// Opens and maps this rank's range of `path` (a collective call).
inline RankInput open_rank_input(MPI_Comm comm, const std::string& path, size_t lookback) {
  RankInput in;
  in.comm = comm;
  MPI_Comm_size(comm, &in.ranks);
  MPI_Comm_rank(comm, &in.rank);
  if (path == "-") throw std::runtime_error("under mpirun, INPUT must be a file every rank can read");
  std::string error;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat info {};
  if (fd < 0 || ::fstat(fd, &info) != 0) error = std::strerror(errno);
  else if (!S_ISREG(info.st_mode)) error = "not a regular file";
  if (!error.empty()) error = "cannot read input '" + path + "': " + error;
  uint64_t size = error.empty() ? uint64_t(info.st_size) : 0, low = 0, high = 0;
  if (!error.empty() && fd >= 0) ::close(fd);
  agree_or_throw(comm, error);
  MPI_Allreduce(&size, &low, 1, MPI_UINT64_T, MPI_MIN, comm);
  MPI_Allreduce(&size, &high, 1, MPI_UINT64_T, MPI_MAX, comm);
  if (low != high) {
    ::close(fd);
    throw std::runtime_error("the ranks see different sizes of '" + path + "'");
  }
  in.n = size_t(size);
  in.begin = size_t((unsigned __int128)in.n * unsigned(in.rank) / unsigned(in.ranks));
  in.end = size_t((unsigned __int128)in.n * unsigned(in.rank + 1) / unsigned(in.ranks));
  in.window = std::min(in.begin, lookback);
  try {
    in.mapped = std::make_unique<MappedRange>(fd, in.begin - in.window, in.end);
  } catch (const std::exception& failure) {
    error = "cannot map input '" + path + "': " + failure.what();
  }
  ::close(fd);
  agree_or_throw(comm, error);
  return in;
}

// This rank's share of the result: counts per tag, matches at offsets in the file.
struct RankPart {
  std::vector<uint64_t> counts;
  std::vector<Match> matches;
};

// The parts of every rank, on rank 0 (elsewhere: this rank's own part, unchanged).
inline RankPart gather_parts(const RankInput& in, RankPart mine) {
  RankPart whole;
  whole.counts.assign(mine.counts.size(), 0);
  MPI_Reduce(mine.counts.data(), whole.counts.data(), int(mine.counts.size()), MPI_UINT64_T,
             MPI_SUM, 0, in.comm);
  std::vector<uint64_t> flat;  // (offset, tag) pairs as u64
  flat.reserve(2 * mine.matches.size());
  for (const Match& match : mine.matches) flat.push_back(match.offset), flat.push_back(match.tag);
  uint64_t count = flat.size(), total = 0;
  std::vector<uint64_t> sizes(size_t(in.ranks));
  MPI_Allgather(&count, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, in.comm);
  std::vector<int> counts(size_t(in.ranks)), offsets(size_t(in.ranks));
  for (int r = 0; r < in.ranks; ++r)
    counts[size_t(r)] = int(sizes[size_t(r)]), offsets[size_t(r)] = int(total), total += sizes[size_t(r)];
  if (total > uint64_t(1) << 30)  // every rank knows: all throw alike
    throw std::runtime_error("too many matches to gather on rank 0 (more than 2^29)");
  std::vector<uint64_t> gathered(in.rank == 0 ? total : 0);
  MPI_Gatherv(flat.data(), int(count), MPI_UINT64_T, gathered.data(), counts.data(),
              offsets.data(), MPI_UINT64_T, 0, in.comm);
  if (in.rank != 0) return mine;
  for (size_t i = 0; i + 1 < gathered.size(); i += 2)
    whole.matches.push_back(Match{gathered[i], uint32_t(gathered[i + 1])});
  const auto before = [](const Match& a, const Match& b) {
    return a.offset != b.offset ? a.offset < b.offset : a.tag < b.tag;
  };
  if (!std::is_sorted(whole.matches.begin(), whole.matches.end(), before))
    std::stable_sort(whole.matches.begin(), whole.matches.end(), before);
  return whole;
}

}  // namespace v1
}  // namespace parafuse::fsm
