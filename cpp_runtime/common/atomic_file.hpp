// parafuse runtime, shared by the ccn and fsm runners: a file written whole or not at all.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace parafuse::common {

// `path` whole or not at all: the parts are written to a temporary file in the same
// folder, every write and the close checked, synced to the disk and renamed over `path`
// (the folder synced after). On a failure (a full disk, a file size limit, a read-only
// folder) the temporary file is removed and the error names `path` and the system's
// reason.
inline void write_file_atomically(const std::string& path,
                                  const std::vector<std::pair<const char*, size_t>>& parts) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  int error = 0;
  for (const auto& [data, size] : parts) {
    for (size_t done = 0; done < size && !error;) {
      const ssize_t n = ::write(fd, data + done, size - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) error = n < 0 ? errno : EIO;
      else done += static_cast<size_t>(n);
    }
  }
  if (!error && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && !error) error = errno;
  if (!error && std::rename(tmp.c_str(), path.c_str()) != 0) error = errno;
  if (error) {
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(error));
  }
  const size_t slash = path.find_last_of('/');
  const std::string folder = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const int folder_fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (folder_fd >= 0) {  // the rename itself on the disk; a folder that cannot be synced
    ::fsync(folder_fd);  // (some file systems) leaves the file written all the same
    ::close(folder_fd);
  }
}

}  // namespace parafuse::common
