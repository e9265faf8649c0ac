#include "capture_counts.h"

#include <fmt/format.h>

#include <cstdio>
#include <string>

namespace kiln_bench {

using kiln::logs::Channel;

CaptureCounter::CaptureCounter() {
  std::string channels = "graph,graph_breaks,recompiles,compile_progress";
  for (Channel c : kiln::logs::all_channels()) {
    if (!kiln::logs::enabled(c)) continue;
    user_channels_.insert(c);
    channels += fmt::format(",{}", kiln::logs::channel_name(c));
  }
  kiln::logs::set_enabled(channels);
  // Records reach the sink one at a time (logs.h), so the counts need no lock.
  previous_sink_ = kiln::logs::set_sink([this](Channel c, std::string_view message) {
    if (c == Channel::graph) ++counts_.graphs;
    if (c == Channel::graph_breaks) ++counts_.graph_breaks;
    if (c == Channel::recompiles) ++counts_.recompiles;
    if (c == Channel::compile_progress && progress_receiver_) progress_receiver_(message);
    if (user_channels_.contains(c)) {
      std::fputs(kiln::logs::format_record(c, message).c_str(), stderr);
    }
  });
  previous_warning_handler_ = kiln::set_warning_handler([this](std::string_view message) {
    ++counts_.warnings;
    fmt::print(stderr, "kiln: warning: {}\n", message);
  });
}

CaptureCounter::~CaptureCounter() {
  kiln::set_warning_handler(previous_warning_handler_);
  kiln::logs::set_sink(previous_sink_);
  std::string channels;
  for (Channel c : user_channels_) {
    channels += fmt::format("{}{}", channels.empty() ? "" : ",", kiln::logs::channel_name(c));
  }
  kiln::logs::set_enabled(channels);
}

CaptureCounts CaptureCounter::counts() const { return counts_; }

void CaptureCounter::reset() { counts_ = {}; }

void CaptureCounter::on_compile_progress(std::function<void(std::string_view)> receiver) {
  progress_receiver_ = std::move(receiver);
}

}  // namespace kiln_bench
