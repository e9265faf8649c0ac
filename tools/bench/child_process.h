#pragma once
// Running another program and reading what it prints: this binary re-executed for a warm compile
// (a fresh process, a filled code cache), and git for the commit id.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln_bench {

struct ChildOutput {
  int exit_status = -1;  // the exit code; -1 when killed by a signal or not started
  std::string stdout_text;
};

// Runs argv[0] (a path) with argv and this process's environment changed by `env` (a value set
// or, when nullopt, removed); its stderr stays ours.
ChildOutput run_child(const std::vector<std::string>& argv,
                      const std::map<std::string, std::optional<std::string>>& env = {});

// The path of the running executable.
std::string self_executable();

}  // namespace kiln_bench
