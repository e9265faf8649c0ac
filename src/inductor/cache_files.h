#pragma once
// File operations the code cache builds its crash- and race-safety on: private folders, unique
// temporary names, whole-file replacement (write, fsync, rename) and folder locks.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::inductor {

// Creates `dir` with mode 0700 (its missing parents with the default mode) unless it exists.
// Raises kiln::Error naming the folder; `hint` is appended (what the user can do about it).
void create_private_directory(const std::filesystem::path& dir, std::string_view hint);

// "<name>.tmp.<pid>.<thread id>.<counter>": unique among processes and threads, and matched by
// remove_stale_temporaries.
std::filesystem::path unique_temporary_name(const std::filesystem::path& final_path);

// Removes the files of `dir` whose name contains ".tmp" and which were last written more than
// `age` ago (leftovers of crashed writers). Errors are ignored: this is housekeeping.
void remove_stale_temporaries(const std::filesystem::path& dir, std::chrono::seconds age);

// The whole content of a file, or nullopt if it cannot be opened or read.
std::optional<std::string> read_whole_file(const std::filesystem::path& path);

// Writes `content` to a temporary file beside `path`, fsyncs it and renames it onto `path`, so
// readers see the old content or the new one, never a part. Raises kiln::Error naming the path.
void replace_file(const std::filesystem::path& path, std::string_view content);

// Flushes a written file (or a folder, making renames in it durable) to disk. Raises kiln::Error
// naming the path.
void sync_to_disk(const std::filesystem::path& path);

// Renames `from` onto `to` (atomically replacing it). Raises kiln::Error naming both.
void rename_onto(const std::filesystem::path& from, const std::filesystem::path& to);

// The ok record of a published file: "<size> <content hash>\n".
std::string ok_record(std::string_view bytes);

// Publishes `temporary` (a file a compiler wrote whole) as `target` and `ok` as its record: the
// file synced, renamed onto target, the record replaced, the folder synced. Raises when the file
// cannot be read. The caller holds the folder's exclusive FolderLock, so that readers see both
// old or both new.
void publish_with_record(const std::filesystem::path& temporary,
                         const std::filesystem::path& target, const std::filesystem::path& ok);

// Files removed (if they exist) when the object goes out of scope: temporary files of a step that
// may fail half-way. Errors are ignored.
class TemporaryFiles {
 public:
  TemporaryFiles() = default;
  ~TemporaryFiles();
  TemporaryFiles(const TemporaryFiles&) = delete;
  TemporaryFiles& operator=(const TemporaryFiles&) = delete;
  // Returns `path`, now removed at the end.
  std::filesystem::path add(std::filesystem::path path);

 private:
  std::vector<std::filesystem::path> paths_;
};

// An flock(2) on a folder, held for the object's lifetime: exclusive for writers, shared for
// readers. Released by the kernel if the process dies. Where the file system has no flock, the
// folder is left unlocked (see the .cpp).
class FolderLock {
 public:
  enum class Mode { shared, exclusive };
  FolderLock(const std::filesystem::path& dir, Mode mode);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_;
};

}  // namespace kiln::inductor
