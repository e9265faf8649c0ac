#pragma once
// Measures one case in one compile mode: everything of one row of the table.
#include <string>
#include <vector>

#include "capture_counts.h"
#include "case.h"
#include "result.h"
#include "timing.h"

namespace kiln_bench {

struct RunOptions {
  Setup setup;  // shapes and device
  std::string backend = "inductor";
  int threads = 2;
  TimingOptions timing;
  bool quiet = false;
};

// Builds the case, calls eager then compiled once with an empty code cache (cold compile; the
// outputs give max_rel_err), times both interleaved, measures peak memory, and times the first
// compiled call of a fresh process on the filled cache (warm compile). A failure is reported in
// the row's `error`, never thrown.
Result run_case(const Case& c, const std::string& mode, const RunOptions& options,
                CaptureCounter& counter);

// The fresh process of the warm compile: builds the case and prints the seconds of its first
// compiled call on stdout as "warm_compile_s=<seconds>". Returns the exit code.
int internal_warm_compile(const Case& c, const std::string& mode, const RunOptions& options);

// The command-line arguments (after the program name) that make this binary run
// internal_warm_compile with the same options.
std::vector<std::string> warm_compile_arguments(const Case& c, const std::string& mode,
                                                const RunOptions& options);

}  // namespace kiln_bench
