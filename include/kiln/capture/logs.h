#pragma once
// Compile-time logging channels, as TORCH_LOGS: KILN_LOGS=graph_breaks,recompiles (a comma list;
// "all" enables every channel; unknown names raise kiln::Error listing the valid ones when first
// read). Each channel prints what its name says, one "[kiln:<channel>] ..." record per message,
// to stderr unless a sink is installed.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::logs {

enum class Channel {
  graph,         // each captured graph, printed
  graph_breaks,  // each graph break: reason and source line
  recompiles,    // each recompile: the guard that failed
  guards,        // the guards of each compiled entry
  aot_graphs,    // forward/backward graphs (aot layer)
  fusion,        // scheduler fusion decisions (inductor)
  output_code,   // generated source (inductor)
  dynamic,       // dimensions marked dynamic
  perf_hints,    // where compiled code is known to lose
  ddp,           // compiled DDP: where the graph is cut at bucket boundaries
  cudagraphs,    // CUDA graphs recorded (reduce-overhead on a GPU), and why one was recorded again
  compile_progress,  // generated kernels compiled so far out of a graph's total (inductor)
};

std::string_view channel_name(Channel c);
std::vector<Channel> all_channels();

// Whether a channel is on (KILN_LOGS, read once per process unless set_enabled was called).
bool enabled(Channel c);
// Overrides KILN_LOGS with a comma list ("" turns every channel off), e.g. for tests.
void set_enabled(std::string_view comma_list);
// Emits one record if the channel is on.
void log(Channel c, std::string_view message);
// The text log() writes to stderr for one record: "[kiln:<channel>] <message>\n". A multi-line
// message keeps the prefix on its first line only and indents the others by two spaces; one
// trailing newline of the message is dropped. A sink receives the message unformatted.
std::string format_record(Channel c, std::string_view message);
// Installs a sink receiving every record (channel, message) instead of stderr; an empty function
// restores stderr. Returns the previous sink. Records reach the sink one at a time (under a
// mutex), so it need not be thread-safe; a record logged from inside the sink goes to stderr.
using Sink = std::function<void(Channel, std::string_view)>;
Sink set_sink(Sink sink);

}  // namespace kiln::logs
