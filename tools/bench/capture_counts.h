#pragma once
// Counts what capture reports (graphs compiled, graph breaks, recompiles) by listening to its log
// channels, and its warnings: kiln has no public counters, and the logs say exactly these events.
// Channels the user enabled with KILN_LOGS, and the warnings, still print to stderr.
#include <kiln/capture/compile.h>
#include <kiln/capture/logs.h>

#include <cstddef>
#include <functional>
#include <set>
#include <string_view>

namespace kiln_bench {

struct CaptureCounts {
  size_t graphs = 0;        // graphs handed to the backend
  size_t graph_breaks = 0;  // logged on every (re-)trace of a function that breaks
  size_t recompiles = 0;    // guard failures that led to a new trace
  size_t warnings = 0;      // compile warnings (a function falling back to eager)
};

// Installs itself as the log sink for its lifetime (one at a time).
class CaptureCounter {
 public:
  CaptureCounter();
  ~CaptureCounter();
  CaptureCounter(const CaptureCounter&) = delete;
  CaptureCounter& operator=(const CaptureCounter&) = delete;

  // The counts since the last reset.
  CaptureCounts counts() const;
  void reset();
  // Receives each compile_progress record ("<graph>: 48 of 120 kernels compiled"); none: they
  // are dropped (unless the user enabled the channel).
  void on_compile_progress(std::function<void(std::string_view)> receiver);

 private:
  CaptureCounts counts_;
  std::set<kiln::logs::Channel> user_channels_;
  kiln::logs::Sink previous_sink_;
  kiln::WarningHandler previous_warning_handler_;
  std::function<void(std::string_view)> progress_receiver_;
};

}  // namespace kiln_bench
