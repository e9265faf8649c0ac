#pragma once
// One row of kiln_bench's output: a workload, phase and compile mode, with the keys of
// BENCHMARKS.md (unset = null in the JSON) and a few of kiln_bench's own.
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>

namespace kiln_bench {

struct Result {
  std::string workload, device = "cpu", phase;
  std::optional<std::string> mode;      // unset: an eager-only row
  std::optional<std::string> autocast;  // the autocast dtype ("bfloat16"), unset: none
  std::optional<double> eager_ms, compiled_ms, speedup;
  std::optional<double> compile_s_cold, compile_s_warm;
  std::optional<size_t> graphs, graph_breaks, recompiles;
  std::optional<double> peak_mb, max_rel_err;
  std::optional<size_t> recompiles_second_pass;  // bert-dynamic only
  std::optional<double> second_pass_ms;          // bert-dynamic only
  // Beyond BENCHMARKS.md's keys.
  std::optional<double> eager_peak_mb;  // the same measure for the eager run
  std::optional<double> overhead_us;    // overhead only: compiled minus eager per call
  double tolerance = 0;                 // max_rel_err allowed
  std::optional<std::string> error;     // why the row has no compiled figures
  std::optional<std::string> note;      // how the row was measured, where it differs

  // Whether compiled matched eager (a failed row did not; NaN never does).
  bool matches() const {
    return !error && (!max_rel_err || (!std::isnan(*max_rel_err) && *max_rel_err <= tolerance));
  }
};

}  // namespace kiln_bench
