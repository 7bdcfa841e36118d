// parafuse boostfsm runtime: the runner's input, a file memory-mapped where possible
// (regular files), else read whole (standard input as `-`, pipes, devices).
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace parafuse::fsm {
inline namespace v1 {

// Whether this process is a rank started by Open MPI's mpirun (or another PMIx launcher).
inline bool launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}

// Whether this process is rank 0 of its mpirun (or not under mpirun), read from the
// launcher's environment before MPI starts: a usage error is printed by that one alone.
inline bool first_or_only_process() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK"})
    if (const char* rank = std::getenv(name)) return std::string(rank) == "0";
  return true;
}

// The size of the file at `path` (runner reports under MPI: the ranks read their ranges).
inline uint64_t file_bytes(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    throw std::runtime_error("cannot read input '" + path + "': " + std::strerror(errno));
  return uint64_t(info.st_size);
}

class InputBytes {
 public:
  explicit InputBytes(const std::string& path) {
    const bool standard_input = path == "-";
    const int fd = standard_input ? 0 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail(path, std::strerror(errno));
    struct stat info {};
    if (::fstat(fd, &info) != 0) close_and_fail(fd, standard_input, path, std::strerror(errno));
    if (S_ISDIR(info.st_mode)) close_and_fail(fd, standard_input, path, "it is a directory");
    if (S_ISREG(info.st_mode) && info.st_size > 0) {
      void* mapped = ::mmap(nullptr, size_t(info.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (mapped != MAP_FAILED) {
        ::madvise(mapped, size_t(info.st_size), MADV_SEQUENTIAL | MADV_WILLNEED);
        mapped_ = static_cast<const uint8_t*>(mapped);
        size_ = size_t(info.st_size);
        if (!standard_input) ::close(fd);
        return;
      }
    }
    read_all(fd, path);
    if (!standard_input) ::close(fd);
  }
  InputBytes(const InputBytes&) = delete;
  InputBytes& operator=(const InputBytes&) = delete;
  ~InputBytes() {
    if (mapped_) ::munmap(const_cast<uint8_t*>(mapped_), size_);
  }

  const uint8_t* data() const { return mapped_ ? mapped_ : buffer_.data(); }
  size_t size() const { return size_; }
  bool memory_mapped() const { return mapped_ != nullptr; }

 private:
  const uint8_t* mapped_ = nullptr;
  std::vector<uint8_t> buffer_ = std::vector<uint8_t>(1);
  size_t size_ = 0;

  [[noreturn]] static void fail(const std::string& path, const std::string& why) {
    throw std::runtime_error("cannot read input '" + path + "': " + why);
  }
  [[noreturn]] static void close_and_fail(int fd, bool keep, const std::string& path,
                                          const std::string& why) {
    if (!keep) ::close(fd);
    fail(path, why);
  }
  void read_all(int fd, const std::string& path) {
    buffer_.resize(size_t(1) << 16);
    for (;;) {
      if (size_ == buffer_.size()) buffer_.resize(2 * buffer_.size());
      const ssize_t got = ::read(fd, buffer_.data() + size_, buffer_.size() - size_);
      if (got == 0) break;
      if (got < 0) {
        if (errno == EINTR) continue;
        const std::string why = std::strerror(errno);
        if (fd != 0) ::close(fd);
        fail(path, why);
      }
      size_ += size_t(got);
    }
  }
};

}  // namespace v1
}  // namespace parafuse::fsm
