#pragma once
// Runs a program as a child process without a shell (posix_spawnp: arguments are passed as they
// are, never re-parsed or quoted), with stdout and stderr captured together.
#include <sys/types.h>

#include <string>
#include <vector>

namespace kiln::inductor {

struct ProcessResult {
  // Whether the program could be started at all; when false, start_error says why (strerror).
  bool started = false;
  std::string start_error;
  // The exit status (0..255) when it exited normally, else -1 with the signal in term_signal.
  int exit_status = -1;
  int term_signal = 0;
  // stdout and stderr interleaved as written.
  std::string output;

  bool succeeded() const { return started && exit_status == 0; }
  // "exit status 1", "killed by signal 9 (Killed)" or "could not be started: <reason>".
  std::string status_text() const;
};

// A child process started without waiting for it, so that several run at once: argv[0] (searched
// in PATH unless it contains a '/') with argv[1..], stdin from /dev/null and stdout+stderr into
// an anonymous temporary file that wait() reads back. A process not waited for is waited for
// by the destructor (never left a zombie, even when an error unwinds past it).
class ChildProcess {
 public:
  // Raises kiln::Error only for failures of this process (no temporary file); a program that
  // cannot be started is reported by wait() (ProcessResult::started).
  explicit ChildProcess(const std::vector<std::string>& argv);
  ~ChildProcess();
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Waits for the process to end (once). Raises kiln::Error if waiting fails.
  ProcessResult wait();

 private:
  std::string program_;
  int output_fd_ = -1;  // owned; -1 once moved from
  pid_t pid_ = -1;      // -1 when not started or already waited for
  ProcessResult result_;
};

// ChildProcess(argv).wait(): runs the program and waits for it to end.
ProcessResult run_process(const std::vector<std::string>& argv);

// The first `max_lines` lines of `text`, with a note saying how many lines were left out.
std::string first_lines(const std::string& text, size_t max_lines);

}  // namespace kiln::inductor
