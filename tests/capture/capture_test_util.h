#pragma once
// Helpers for the capture tests: collecting log records and warnings, and a backend that counts
// the graphs it compiles.
#include "test_util.h"

#include <kiln/capture/compile.h>
#include <kiln/capture/logs.h>

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::testing {

// How many times `part` occurs in `text` (overlapping occurrences counted): generated-code checks.
inline size_t occurrences(std::string_view text, std::string_view part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string_view::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// Turns on the given log channels and collects their records for the test's lifetime. Captures
// nest: an inner one (a helper's) adds its channels to those already on and hands the records of
// those to the outer one too; both are restored when it ends.
class LogCapture {
 public:
  explicit LogCapture(std::string_view channels) {
    std::string on(channels);
    for (logs::Channel c : logs::all_channels()) {
      if (!logs::enabled(c)) continue;
      previously_on_.insert(c);
      previous_list_ +=
          std::string(previous_list_.empty() ? "" : ",") + std::string(logs::channel_name(c));
    }
    logs::set_enabled(on + (on.empty() || previous_list_.empty() ? "" : ",") + previous_list_);
    previous_ = logs::set_sink([this](logs::Channel c, std::string_view m) {
      records.push_back(std::string(logs::channel_name(c)) + ": " + std::string(m));
      if (previous_ && previously_on_.count(c)) previous_(c, m);
    });
  }
  ~LogCapture() {
    logs::set_sink(previous_);
    logs::set_enabled(previous_list_);
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  // Records containing `part`.
  size_t count(std::string_view part) const {
    size_t n = 0;
    for (const std::string& r : records) n += r.find(part) != std::string::npos;
    return n;
  }
  std::string all() const {
    std::string s;
    for (const std::string& r : records) s += r + "\n";
    return s;
  }
  // The generated kernels of output_code's sources (each from its first function on, after the
  // preludes).
  std::string generated_kernels() const {
    std::string text;
    for (const std::string& r : records) {
      const size_t at = r.find("extern \"C\" void");
      if (at != std::string::npos) text += r.substr(at);
    }
    return text;
  }
  std::vector<std::string> records;

 private:
  logs::Sink previous_;
  std::set<logs::Channel> previously_on_;
  std::string previous_list_;
};

// Collects compile warnings for the test's lifetime.
class WarningCapture {
 public:
  WarningCapture() {
    previous_ = set_warning_handler([this](std::string_view m) { warnings.emplace_back(m); });
  }
  ~WarningCapture() { set_warning_handler(previous_); }
  WarningCapture(const WarningCapture&) = delete;
  WarningCapture& operator=(const WarningCapture&) = delete;
  std::vector<std::string> warnings;

 private:
  WarningHandler previous_;
};

// A backend that runs graphs with the interpreter and remembers each graph it was given.
struct RecordingBackend {
  std::shared_ptr<std::vector<std::string>> graphs = std::make_shared<std::vector<std::string>>();
  std::shared_ptr<std::vector<size_t>> op_counts = std::make_shared<std::vector<size_t>>();
  Backend backend() const {
    return [graphs = graphs, op_counts = op_counts](const graph::Graph& g, std::span<const Tensor>,
                                                    const BackendContext&) -> CompiledGraph {
      graphs->push_back(g.str());
      op_counts->push_back(g.num_ops());
      return [copy = std::make_shared<graph::Graph>(g.clone())](std::span<const Tensor> in) {
        return graph::interpret(*copy, in);
      };
    };
  }
};

}  // namespace kiln::testing
