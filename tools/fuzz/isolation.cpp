#include "fuzz/isolation.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kiln/core/error.h>
#include <kiln/core/parallel.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iostream>

namespace kiln::fuzz {
namespace {

// What the child sends, one record per step: eager rejected the program (its message), eager
// ran, or a configuration's outcome (its index, status and detail).
enum class Tag : uint8_t { EagerRejected = 'R', EagerRan = 'E', Outcome = 'O' };

struct Record {
  Tag tag;
  uint32_t index = 0;
  uint8_t status = 0;
  std::string detail;
};
constexpr size_t kHeaderBytes = 1 + 4 + 1 + 4;

void write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(3);  // the parent is gone
    p += n;
    size -= static_cast<size_t>(n);
  }
}

void send(int fd, const Record& r) {
  char header[kHeaderBytes];
  const uint32_t length = static_cast<uint32_t>(r.detail.size());
  header[0] = static_cast<char>(r.tag);
  std::memcpy(header + 1, &r.index, 4);
  header[5] = static_cast<char>(r.status);
  std::memcpy(header + 6, &length, 4);
  write_all(fd, header, sizeof header);
  write_all(fd, r.detail.data(), r.detail.size());
}

// The whole records in `bytes` (a crash can cut the last one short).
std::vector<Record> parse(const std::string& bytes) {
  std::vector<Record> records;
  size_t pos = 0;
  while (pos + kHeaderBytes <= bytes.size()) {
    Record r;
    r.tag = static_cast<Tag>(bytes[pos]);
    std::memcpy(&r.index, bytes.data() + pos + 1, 4);
    r.status = static_cast<uint8_t>(bytes[pos + 5]);
    uint32_t length = 0;
    std::memcpy(&length, bytes.data() + pos + 6, 4);
    if (pos + kHeaderBytes + length > bytes.size()) break;
    r.detail = bytes.substr(pos + kHeaderBytes, length);
    pos += kHeaderBytes + length;
    records.push_back(std::move(r));
  }
  return records;
}

struct ChildEnd {
  std::vector<Record> records;
  std::optional<std::string> abnormal;  // how the child died, if it did not exit normally
};

// Forks; the child runs `body` with the pipe's write end and exits without running destructors
// or atexit handlers (the parent's state is not the child's to tear down).
template <typename Body>
ChildEnd run_in_child(const IsolationOptions& options, Body&& body) {
  int fds[2];
  KILN_CHECK(::pipe2(fds, O_CLOEXEC) == 0, "kiln_fuzz: pipe2 failed: {}", std::strerror(errno));
  std::cout.flush();  // or the child's copy of the buffer is printed twice
  std::cerr.flush();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    KILN_FAIL("kiln_fuzz: fork failed: {}", std::strerror(error));
  }
  if (pid == 0) {
    ::close(fds[0]);
    const rlimit no_core{0, 0};  // a crash is a finding, not a core file in the working folder
    ::setrlimit(RLIMIT_CORE, &no_core);
    if (options.timeout_s > 0) ::alarm(static_cast<unsigned>(options.timeout_s));
    if (options.threads > 0) set_num_threads(options.threads);
    body(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ChildEnd end{parse(bytes), std::nullopt};
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    end.abnormal = signal == SIGALRM
                       ? fmt::format("timed out after {} s", options.timeout_s)
                       : fmt::format("crashed: signal {} ({})", signal, ::strsignal(signal));
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    // A sanitizer's report (on stderr) ends the process this way.
    end.abnormal = fmt::format("crashed: exit status {}", WEXITSTATUS(status));
  }
  return end;
}

}  // namespace

ProgramResult run_program_isolated(const Program& program, const std::vector<RunConfig>& configs,
                                   const IsolationOptions& options) {
  const ChildEnd end = run_in_child(options, [&](int fd) {
    size_t sent = 0;
    bool eager_sent = false;
    const ProgramResult result = run_program(program, configs, [&](const ProgramResult& so_far) {
      if (!eager_sent) {
        send(fd, {Tag::EagerRan, 0, 0, ""});
        eager_sent = true;
      }
      for (; sent < so_far.outcomes.size(); ++sent) {
        const Outcome& o = so_far.outcomes[sent];
        send(fd,
             {Tag::Outcome, static_cast<uint32_t>(sent), static_cast<uint8_t>(o.status), o.detail});
      }
    });
    if (result.eager_rejected) send(fd, {Tag::EagerRejected, 0, 0, result.eager_detail});
  });

  ProgramResult result;
  bool eager_ran = false;
  for (const Record& r : end.records) {
    switch (r.tag) {
      case Tag::EagerRejected:
        result.eager_rejected = true;
        result.eager_detail = r.detail;
        break;
      case Tag::EagerRan:
        eager_ran = true;
        break;
      case Tag::Outcome: {
        Outcome o;
        o.config = configs.at(r.index);
        o.status = static_cast<Outcome::Status>(r.status);
        o.detail = r.detail;
        result.outcomes.push_back(std::move(o));
        break;
      }
    }
  }
  if (!end.abnormal || result.eager_rejected) return result;
  // Charged to the configuration that was running (to the first one if eager was).
  const size_t running = result.outcomes.size();
  for (size_t i = running; i < configs.size(); ++i) {
    Outcome o;
    o.config = configs[i];
    if (i == running) {
      o.status = Outcome::Status::Error;
      o.detail = eager_ran ? *end.abnormal : "eager run " + *end.abnormal;
    } else {
      o.status = Outcome::Status::Skipped;
      o.detail = "not run: the program's process died under " + configs[running].name();
    }
    result.outcomes.push_back(std::move(o));
  }
  return result;
}

std::optional<Outcome> run_config_isolated(const Program& program, const RunConfig& config,
                                           const IsolationOptions& options) {
  ProgramResult result = run_program_isolated(program, {config}, options);
  if (result.eager_rejected || result.outcomes.empty()) return std::nullopt;
  return std::move(result.outcomes[0]);
}

}  // namespace kiln::fuzz
