#pragma once
// The fuzzers' input as a file: an anonymous in-memory file (memfd) whose /proc path the readers
// open like any other, so each run touches no disk and leaves nothing behind.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace kiln::fuzzing {

class MemoryFile {
 public:
  MemoryFile(const uint8_t* data, size_t size) : fd_(memfd_create("kiln-fuzz", MFD_CLOEXEC)) {
    if (fd_ < 0) std::abort();
    size_t written = 0;
    while (written < size) {
      const ssize_t n = ::write(fd_, data + written, size - written);
      if (n <= 0) std::abort();
      written += static_cast<size_t>(n);
    }
  }
  ~MemoryFile() { ::close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

}  // namespace kiln::fuzzing
