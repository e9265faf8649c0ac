// Crash- and race-safe file operations for the code cache (see cache_files.h).
#include "inductor/cache_files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inductor/content_hash.h"

#include <kiln/core/error.h>

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

namespace kiln::inductor {

namespace fs = std::filesystem;

void create_private_directory(const fs::path& dir, std::string_view hint) {
  std::error_code ec;
  if (dir.has_parent_path()) fs::create_directories(dir.parent_path(), ec);
  KILN_CHECK(!ec, "could not create folder {}: {}; {}", dir.parent_path().string(), ec.message(),
             hint);
  if (::mkdir(dir.c_str(), 0700) != 0) {
    int error = errno;
    KILN_CHECK(error == EEXIST, "could not create folder {}: {}; {}", dir.string(),
               std::strerror(error), hint);
    KILN_CHECK(fs::is_directory(dir, ec), "{} exists but is not a folder; {}", dir.string(), hint);
  }
}

fs::path unique_temporary_name(const fs::path& final_path) {
  // Unique within the process; pid and thread id make it unique across processes and threads.
  static std::atomic<unsigned long> counter{0};
  fs::path name = final_path;
  name += fmt::format(".tmp.{}.{}.{}", ::getpid(), ::gettid(), counter.fetch_add(1));
  return name;
}

void remove_stale_temporaries(const fs::path& dir, std::chrono::seconds age) {
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().filename().string().find(".tmp") == std::string::npos) continue;
    auto written = entry.last_write_time(ec);
    if (!ec && now - written > age) fs::remove(entry.path(), ec);
  }
}

std::optional<std::string> read_whole_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(content).str();
}

void sync_to_disk(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  KILN_CHECK(fd >= 0, "could not open {} to flush it to disk: {}", path.string(),
             std::strerror(errno));
  int result = ::fsync(fd);
  int error = errno;
  ::close(fd);
  KILN_CHECK(result == 0, "could not flush {} to disk: {}", path.string(), std::strerror(error));
}

void rename_onto(const fs::path& from, const fs::path& to) {
  KILN_CHECK(std::rename(from.c_str(), to.c_str()) == 0, "could not rename {} to {}: {}",
             from.string(), to.string(), std::strerror(errno));
}

std::string ok_record(std::string_view bytes) {
  return fmt::format("{} {}\n", bytes.size(), content_hash(bytes));
}

void publish_with_record(const fs::path& temporary, const fs::path& target, const fs::path& ok) {
  const std::optional<std::string> bytes = read_whole_file(temporary);
  KILN_CHECK(bytes.has_value(), "the compiler reported success but {} cannot be read",
             temporary.string());
  sync_to_disk(temporary);
  rename_onto(temporary, target);
  replace_file(ok, ok_record(*bytes));
  sync_to_disk(target.parent_path());
}

void replace_file(const fs::path& path, std::string_view content) {
  fs::path temporary = unique_temporary_name(path);
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  KILN_CHECK(fd >= 0, "could not create {}: {}", temporary.string(), std::strerror(errno));
  size_t written = 0;
  int error = 0;
  while (written < content.size()) {
    ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = errno;
      break;
    }
    written += static_cast<size_t>(n);
  }
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  ::close(fd);
  if (error != 0) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    KILN_FAIL("could not write {}: {}", temporary.string(), std::strerror(error));
  }
  rename_onto(temporary, path);
}

TemporaryFiles::~TemporaryFiles() {
  std::error_code ignored;
  for (const fs::path& path : paths_) fs::remove(path, ignored);
}

fs::path TemporaryFiles::add(fs::path path) { return paths_.emplace_back(std::move(path)); }

FolderLock::FolderLock(const fs::path& dir, Mode mode)
    : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
  KILN_CHECK(fd_ >= 0, "could not open folder {} to lock it: {}", dir.string(),
             std::strerror(errno));
  int result;
  do {
    result = ::flock(fd_, mode == Mode::exclusive ? LOCK_EX : LOCK_SH);
  } while (result != 0 && errno == EINTR);
  // A file system without flock (some network ones) leaves the folder unlocked: every file is
  // still replaced whole, so the worst case is an entry rebuilt once more than needed.
}

FolderLock::~FolderLock() { ::close(fd_); }  // closing the last descriptor releases the flock

}  // namespace kiln::inductor
