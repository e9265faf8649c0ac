// Child processes for the C++ compiler. posix_spawnp rather than system()/popen(): no shell, so a
// compiler path or flag with spaces or quotes reaches the program unchanged.
#include "inductor/subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kiln/core/error.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <utility>

extern char** environ;

namespace kiln::inductor {
namespace {

// posix_spawn_file_actions_t with its destroy call tied to scope.
class SpawnFileActions {
 public:
  SpawnFileActions() { posix_spawn_file_actions_init(&actions_); }
  ~SpawnFileActions() { posix_spawn_file_actions_destroy(&actions_); }
  SpawnFileActions(const SpawnFileActions&) = delete;
  SpawnFileActions& operator=(const SpawnFileActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

// An anonymous temporary file: created and unlinked at once, so a crash leaves nothing behind.
// O_CLOEXEC keeps it out of children spawned concurrently by other threads.
int anonymous_temporary_file() {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  std::string name = (dir / "kiln_process_output_XXXXXX").string();
  int fd = ::mkostemp(name.data(), O_CLOEXEC);
  KILN_CHECK(fd >= 0, "could not create a temporary file in {} to capture a child's output: {}",
             dir.string(), std::strerror(errno));
  ::unlink(name.c_str());
  return fd;
}

std::string read_all(int fd) {
  std::string out;
  if (::lseek(fd, 0, SEEK_SET) < 0) return out;
  char buffer[8192];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

const std::string& program_of(const std::vector<std::string>& argv) {
  KILN_INTERNAL_ASSERT(!argv.empty());
  return argv[0];
}

}  // namespace

std::string ProcessResult::status_text() const {
  if (!started) return fmt::format("could not be started: {}", start_error);
  if (exit_status >= 0) return fmt::format("exit status {}", exit_status);
  return fmt::format("killed by signal {} ({})", term_signal, ::strsignal(term_signal));
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv)
    : program_(program_of(argv)), output_fd_(anonymous_temporary_file()) {
  SpawnFileActions actions;
  posix_spawn_file_actions_addopen(actions.get(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(actions.get(), output_fd_, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(actions.get(), output_fd_, STDERR_FILENO);

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  // glibc reports a failed exec (missing binary, not executable) as posix_spawnp's return value.
  int spawn_error = ::posix_spawnp(&pid_, args[0], actions.get(), nullptr, args.data(), environ);
  if (spawn_error != 0) {
    pid_ = -1;
    result_.start_error = std::strerror(spawn_error);
    return;
  }
  result_.started = true;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : program_(std::move(other.program_)),
      output_fd_(std::exchange(other.output_fd_, -1)),
      pid_(std::exchange(other.pid_, -1)),
      result_(std::move(other.result_)) {}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (output_fd_ >= 0) ::close(output_fd_);
}

ProcessResult ChildProcess::wait() {
  if (pid_ <= 0) return result_;  // never started, or already waited for
  int status = 0;
  pid_t waited;
  do {
    waited = ::waitpid(pid_, &status, 0);
  } while (waited < 0 && errno == EINTR);
  KILN_CHECK(waited == pid_, "waiting for '{}' (pid {}) failed: {}", program_, pid_,
             std::strerror(errno));
  pid_ = -1;

  result_.output = read_all(output_fd_);
  if (WIFEXITED(status)) {
    result_.exit_status = WEXITSTATUS(status);
    // 127 with nothing written: the shell convention for an exec that failed after the fork
    // (C libraries that do not report it from posix_spawnp).
    if (result_.exit_status == 127 && result_.output.empty()) {
      result_.started = false;
      result_.start_error = "exec failed (exit status 127)";
    }
  } else if (WIFSIGNALED(status)) {
    result_.term_signal = WTERMSIG(status);
  }
  return result_;
}

ProcessResult run_process(const std::vector<std::string>& argv) {
  return ChildProcess(argv).wait();
}

std::string first_lines(const std::string& text, size_t max_lines) {
  size_t pos = 0;
  for (size_t line = 0; line < max_lines; ++line) {
    size_t newline = text.find('\n', pos);
    if (newline == std::string::npos) return text;
    pos = newline + 1;
  }
  if (pos >= text.size()) return text;
  size_t rest = 0;
  for (size_t i = pos; i < text.size(); ++i) rest += text[i] == '\n';
  if (text.back() != '\n') ++rest;
  return fmt::format("{}... ({} more lines)\n", text.substr(0, pos), rest);
}

}  // namespace kiln::inductor
