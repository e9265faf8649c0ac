#pragma once
// Crash isolation: a program runs in a forked child, so that a crash (a signal) or a hang in
// eager or compiled code becomes a finding that is reported and shrunk, instead of ending the
// fuzzer. The child sends each configuration's outcome back as soon as it has it: a child that
// dies is charged to the configuration it was running.
//
// The parent only generates programs and forks: OpenMP's runtime does not survive a fork once its
// threads run, so a process that has run kernels should fork with `threads = 1`.
#include "fuzz/runner.h"

#include <optional>

namespace kiln::fuzz {

struct IsolationOptions {
  int timeout_s = 300;  // a child running longer is killed: "timed out"
  int threads = 0;      // kiln::set_num_threads in the child; 0 leaves the default
};

// run_program in a child. The configuration running when the child died gets Status::Error with
// "crashed: <signal>" (or "crashed in eager: <signal>" before any, "timed out after N s"); the
// configurations after it are Skipped.
ProgramResult run_program_isolated(const Program& program, const std::vector<RunConfig>& configs,
                                   const IsolationOptions& options = {});

// Eager and then `config` in a child (the shrinker's predicate); nullopt when eager rejects the
// program.
std::optional<Outcome> run_config_isolated(const Program& program, const RunConfig& config,
                                           const IsolationOptions& options = {});

}  // namespace kiln::fuzz
