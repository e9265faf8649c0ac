#pragma once
// Counts what capture reports (graphs compiled, graph breaks, recompiles) by listening to its log
// channels: kiln has no public counters, and the logs say exactly these events. Channels the user
// enabled with KILN_LOGS still print to stderr.
#include <kiln/capture/logs.h>

#include <cstddef>
#include <set>

namespace kiln_bench {

struct CaptureCounts {
  size_t graphs = 0;        // graphs handed to the backend
  size_t graph_breaks = 0;  // logged on every (re-)trace of a function that breaks
  size_t recompiles = 0;    // guard failures that led to a new trace
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

 private:
  CaptureCounts counts_;
  std::set<kiln::logs::Channel> user_channels_;
  kiln::logs::Sink previous_sink_;
};

}  // namespace kiln_bench
