#include "child_process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <kiln/core/error.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>

extern char** environ;

namespace kiln_bench {
namespace {

// A file descriptor closed when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// "NAME=value" strings of the environment after the changes.
std::vector<std::string> child_environment(
    const std::map<std::string, std::optional<std::string>>& changes) {
  std::vector<std::string> out;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const std::string name = text.substr(0, text.find('='));
    if (!changes.contains(name)) out.push_back(text);
  }
  for (const auto& [name, value] : changes) {
    if (value) out.push_back(name + "=" + *value);
  }
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

ChildOutput run_child(const std::vector<std::string>& argv,
                      const std::map<std::string, std::optional<std::string>>& env) {
  KILN_CHECK(!argv.empty(), "run_child: no program given");
  // Built before fork: the child of a multithreaded process may only call async-signal-safe
  // functions until it execs.
  std::vector<std::string> args = argv, environment = child_environment(env);
  std::vector<char*> arg_ptrs = pointers(args), env_ptrs = pointers(environment);

  std::array<int, 2> ends{};
  KILN_CHECK(::pipe(ends.data()) == 0, "pipe failed: {}", std::strerror(errno));
  Fd read_end(ends[0]), write_end(ends[1]);
  const pid_t pid = ::fork();
  KILN_CHECK(pid >= 0, "fork failed: {}", std::strerror(errno));
  if (pid == 0) {
    ::dup2(write_end.get(), STDOUT_FILENO);
    ::close(read_end.get());
    ::close(write_end.get());
    ::execve(arg_ptrs[0], arg_ptrs.data(), env_ptrs.data());
    ::_exit(127);
  }
  write_end.reset();
  ChildOutput out;
  std::array<char, 4096> buffer{};
  for (;;) {
    const ssize_t n = ::read(read_end.get(), buffer.data(), buffer.size());
    if (n > 0) {
      out.stdout_text.append(buffer.data(), static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  out.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

std::string self_executable() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

}  // namespace kiln_bench
