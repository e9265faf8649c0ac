// Compile-time log channels (TORCH_LOGS's role). Channel flags are atomics so that enabled(), asked
// on every traced op, is one load once KILN_LOGS has been read; writes are serialized by a mutex so
// that records from several threads never interleave.
#include <kiln/capture/logs.h>
#include <kiln/core/error.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <utility>

namespace kiln::logs {
namespace {

constexpr std::array<Channel, 12> kChannels = {
    Channel::graph,      Channel::graph_breaks, Channel::recompiles,  Channel::guards,
    Channel::aot_graphs, Channel::fusion,       Channel::output_code, Channel::dynamic,
    Channel::perf_hints, Channel::ddp,          Channel::cudagraphs,  Channel::compile_progress,
};
using Flags = std::array<bool, kChannels.size()>;

size_t index_of(Channel c) { return static_cast<size_t>(c); }

struct LogState {
  std::array<std::atomic<bool>, kChannels.size()> on{};
  // Set once KILN_LOGS has been read or set_enabled has overridden it.
  std::atomic<bool> configured{false};
  std::mutex config_mutex;
  std::mutex write_mutex;  // guards sink and the writes to stderr
  Sink sink;
};

LogState& state() {
  static LogState s;
  return s;
}

std::string valid_names() {
  std::string out = "all";
  for (Channel c : kChannels) {
    out += ", ";
    out += channel_name(c);
  }
  return out;
}

std::string_view trimmed(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\r\f\v";
  size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  size_t end = s.find_last_not_of(kSpace);
  return s.substr(begin, end - begin + 1);
}

// Parses a comma list of channel names; empty entries are skipped. `source` names where the list
// came from in the error ("KILN_LOGS" or "logs::set_enabled").
Flags parse(std::string_view list, std::string_view source) {
  Flags flags{};
  while (true) {
    size_t comma = list.find(',');
    std::string_view name = trimmed(list.substr(0, comma));
    if (name == "all") {
      flags.fill(true);
    } else if (!name.empty()) {
      bool found = false;
      for (Channel c : kChannels) {
        if (channel_name(c) == name) {
          flags[index_of(c)] = true;
          found = true;
        }
      }
      KILN_CHECK(found, "{}: unknown log channel \"{}\"; valid channels: {}", source, name,
                 valid_names());
    }
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return flags;
}

void set_flags(LogState& s, const Flags& flags) {
  for (size_t i = 0; i < flags.size(); ++i) s.on[i].store(flags[i], std::memory_order_relaxed);
  s.configured.store(true, std::memory_order_release);
}

void ensure_configured() {
  LogState& s = state();
  if (s.configured.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(s.config_mutex);
  if (s.configured.load(std::memory_order_relaxed)) return;
  const char* env = std::getenv("KILN_LOGS");
  // A bad KILN_LOGS raises here and stays unconfigured, so every later call raises too rather
  // than running silently without the logs the user asked for.
  set_flags(s, parse(env ? env : "", "KILN_LOGS"));
}

// Set while this thread runs the sink: a sink that logs writes to stderr instead of waiting on
// the mutex its own thread holds.
thread_local bool in_sink = false;

}  // namespace

std::string_view channel_name(Channel c) {
  switch (c) {
    case Channel::graph:
      return "graph";
    case Channel::graph_breaks:
      return "graph_breaks";
    case Channel::recompiles:
      return "recompiles";
    case Channel::guards:
      return "guards";
    case Channel::aot_graphs:
      return "aot_graphs";
    case Channel::fusion:
      return "fusion";
    case Channel::output_code:
      return "output_code";
    case Channel::dynamic:
      return "dynamic";
    case Channel::perf_hints:
      return "perf_hints";
    case Channel::ddp:
      return "ddp";
    case Channel::cudagraphs:
      return "cudagraphs";
    case Channel::compile_progress:
      return "compile_progress";
  }
  KILN_FAIL("logs: invalid channel {}", static_cast<int>(c));
}

std::vector<Channel> all_channels() { return {kChannels.begin(), kChannels.end()}; }

bool enabled(Channel c) {
  ensure_configured();
  return state().on[index_of(c)].load(std::memory_order_relaxed);
}

void set_enabled(std::string_view comma_list) {
  Flags flags = parse(comma_list, "logs::set_enabled");  // raises before changing anything
  LogState& s = state();
  std::lock_guard<std::mutex> lock(s.config_mutex);
  set_flags(s, flags);
}

std::string format_record(Channel c, std::string_view message) {
  if (!message.empty() && message.back() == '\n') message.remove_suffix(1);
  std::string out = fmt::format("[kiln:{}]", channel_name(c));
  // The first line follows the prefix; continuation lines are indented by two spaces (empty ones
  // stay empty), so a record reads as one block and grep "[kiln:" finds one line per record.
  bool first = true;
  while (true) {
    size_t newline = message.find('\n');
    std::string_view line = message.substr(0, newline);
    if (!line.empty()) out += first ? " " : "  ";
    out += line;
    out += '\n';
    first = false;
    if (newline == std::string_view::npos) break;
    message.remove_prefix(newline + 1);
  }
  return out;
}

void log(Channel c, std::string_view message) {
  if (!enabled(c)) return;
  LogState& s = state();
  if (in_sink) {
    std::string record = format_record(c, message);
    std::fwrite(record.data(), 1, record.size(), stderr);
    return;
  }
  std::lock_guard<std::mutex> lock(s.write_mutex);
  if (s.sink) {
    in_sink = true;
    try {
      s.sink(c, message);
    } catch (...) {
      in_sink = false;
      throw;
    }
    in_sink = false;
    return;
  }
  std::string record = format_record(c, message);
  std::fwrite(record.data(), 1, record.size(), stderr);
}

Sink set_sink(Sink sink) {
  LogState& s = state();
  KILN_CHECK(!in_sink, "logs::set_sink: a sink cannot replace the sink while it runs");
  std::lock_guard<std::mutex> lock(s.write_mutex);
  return std::exchange(s.sink, std::move(sink));
}

}  // namespace kiln::logs
