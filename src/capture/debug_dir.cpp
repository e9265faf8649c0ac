// KILN_COMPILE_DEBUG's folders (TORCH_COMPILE_DEBUG's role): <root>/run_<UTC time>-pid_<pid>/
// <compilation>/<file>. Nothing here ever replaces a file: compilation folders are claimed under a
// new name when taken, and files are published with link(2), which fails rather than overwrite.
#include "core/errno_text.h"

#include <fcntl.h>
#include <unistd.h>

#include <kiln/capture/debug_dir.h>
#include <kiln/core/error.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <set>
#include <string>
#include <system_error>

namespace kiln::debug {
namespace {

namespace fs = std::filesystem;

// -1: read KILN_COMPILE_DEBUG; 0 / 1: set_compile_debug's override.
std::atomic<int> debug_override{-1};

bool truthy(const char* value) {
  if (value == nullptr) return false;
  std::string v = value;
  for (char& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return v == "1" || v == "true" || v == "on";
}

// Characters outside [A-Za-z0-9_.-] become '_', and leading dots too, so a name is one plain,
// visible path component ("..", "a/b" and "" cannot escape or vanish).
std::string sanitized(std::string_view name) {
  std::string out;
  for (char ch : name) {
    bool plain = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
                 ch == '_' || ch == '.' || ch == '-';
    out += plain ? ch : '_';
  }
  for (char& ch : out) {
    if (ch != '.') break;
    ch = '_';
  }
  return out.empty() ? "_" : out;
}

// This process's run folder name, fixed at its first use.
const std::string& run_folder_name() {
  static const std::string name = [] {
    std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char stamp[32];
    std::strftime(stamp, sizeof(stamp), "%Y%m%d_%H%M%S", &utc);
    return fmt::format("run_{}-pid_{}", stamp, ::getpid());
  }();
  return name;
}

fs::path root_folder() {
  const char* env = std::getenv("KILN_COMPILE_DEBUG_DIR");
  if (env != nullptr && *env != '\0') return fs::path(env);
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);  // absolute, so a later chdir does not move the folder
  return ec ? fs::path("kiln_compile_debug") : cwd / "kiln_compile_debug";
}

// A folder's n-th alternative name: "f_graph_0", "f_graph_0_1", ...
std::string numbered_folder(const std::string& name, int n) {
  return n == 0 ? name : fmt::format("{}_{}", name, n);
}

// A file's n-th alternative name: "graph.txt", "graph_1.txt", ... (the suffix goes before the
// extension).
std::string numbered_file(const std::string& name, int n) {
  if (n == 0) return name;
  size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot == 0) return fmt::format("{}_{}", name, n);
  return fmt::format("{}_{}{}", name.substr(0, dot), n, name.substr(dot));
}

// Compilation folders handed out by this process (created only on their first write, so the disk
// alone cannot tell that a name is taken).
struct ClaimedFolders {
  std::mutex mutex;
  std::set<fs::path> paths;
};

ClaimedFolders& claimed() {
  static ClaimedFolders c;
  return c;
}

// A temporary file in the target's folder, removed unless published.
class TemporaryFile {
 public:
  explicit TemporaryFile(const fs::path& folder, const std::string& file) {
    static std::atomic<uint64_t> counter{0};
    for (int attempt = 0; fd_ < 0; ++attempt) {
      path_ = folder / fmt::format(".{}.{}.{}.tmp", file, ::getpid(), counter.fetch_add(1));
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      KILN_CHECK(fd_ >= 0 || (errno == EEXIST && attempt < 100),
                 "compile debug: cannot create {}: {}", path_.string(), errno_text());
    }
  }
  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    ::unlink(path_.c_str());  // after publishing, the target is a second link to the same file
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;

  void write(std::string_view content, const fs::path& target) {
    const char* p = content.data();
    size_t n = content.size();
    while (n > 0) {
      ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      KILN_CHECK(w > 0, "compile debug: cannot write {}: {}", target.string(), errno_text());
      p += w;
      n -= static_cast<size_t>(w);
    }
    int rc = ::close(fd_);
    fd_ = -1;
    KILN_CHECK(rc == 0, "compile debug: cannot write {}: {}", target.string(), errno_text());
  }

  // Gives the written file the name `target`; false if that name exists (nothing is replaced).
  // No fsync: debug artifacts need to appear whole, not to survive a power loss.
  bool publish(const fs::path& target) {
    if (::link(path_.c_str(), target.c_str()) == 0) return true;
    KILN_CHECK(errno == EEXIST, "compile debug: cannot write {}: {}", target.string(),
               errno_text());
    return false;
  }

 private:
  fs::path path_;
  int fd_ = -1;
};

}  // namespace

bool compile_debug_enabled() {
  int forced = debug_override.load(std::memory_order_relaxed);
  if (forced >= 0) return forced == 1;
  return truthy(std::getenv("KILN_COMPILE_DEBUG"));
}

void set_compile_debug(std::optional<bool> on) {
  debug_override.store(on.has_value() ? static_cast<int>(*on) : -1, std::memory_order_relaxed);
}

std::optional<DebugDir> DebugDir::for_compilation(std::string_view name) {
  if (!compile_debug_enabled()) return std::nullopt;
  // The root is read on each call (the run folder's name is fixed per process), so a test or a
  // program may point different compilations at different roots.
  fs::path run = root_folder() / run_folder_name();
  std::string base = sanitized(name);
  ClaimedFolders& c = claimed();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (int n = 0;; ++n) {
    fs::path candidate = run / numbered_folder(base, n);
    std::error_code ec;
    bool on_disk = fs::exists(candidate, ec);
    if (c.paths.count(candidate) == 0 && !on_disk) {
      c.paths.insert(candidate);
      return DebugDir(candidate);
    }
  }
}

fs::path DebugDir::write(std::string_view file, std::string_view content) const {
  std::error_code ec;
  fs::create_directories(path_, ec);
  KILN_CHECK(!ec, "compile debug: cannot create the folder {}: {}", path_.string(), ec.message());
  std::string base = sanitized(file);
  TemporaryFile temp(path_, base);
  temp.write(content, path_ / base);
  for (int n = 0;; ++n) {
    fs::path target = path_ / numbered_file(base, n);
    if (temp.publish(target)) return target;
  }
}

}  // namespace kiln::debug
