#pragma once
// Runs a program as a child process without a shell (posix_spawnp: arguments are passed as they
// are, never re-parsed or quoted), with stdout and stderr captured together.
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

// Runs argv[0] (searched in PATH unless it contains a '/') with argv[1..], stdin from /dev/null
// and stdout+stderr into a temporary file that is read back and removed. Waits for it to end.
// Raises kiln::Error only for failures of this process (no temporary file, wait failed).
ProcessResult run_process(const std::vector<std::string>& argv);

// The first `max_lines` lines of `text`, with a note saying how many lines were left out.
std::string first_lines(const std::string& text, size_t max_lines);

}  // namespace kiln::inductor
