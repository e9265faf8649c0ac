#pragma once
// Helpers for the aot tests: capturing a function's graph, and tracing it ahead of time.
#include "capture/capture_test_util.h"

#include <kiln/aot/aot.h>

#include <memory>

namespace kiln::testing {

// A backend that keeps a copy of the first graph it receives, with copies of its example inputs
// (as they were before the graph ran), and runs graphs with the interpreter.
struct GraphKeeper {
  std::shared_ptr<graph::Graph> graph = std::make_shared<graph::Graph>();
  std::shared_ptr<std::vector<Tensor>> inputs = std::make_shared<std::vector<Tensor>>();
  Backend backend() const {
    return [keep = graph, examples = inputs](const graph::Graph& g, std::span<const Tensor> in,
                                             const BackendContext&) -> CompiledGraph {
      if (keep->nodes().empty()) {
        *keep = g.clone();
        for (const Tensor& t : in) examples->push_back(t.clone());
      }
      return [copy = std::make_shared<graph::Graph>(g.clone())](std::span<const Tensor> in) {
        return graph::interpret(*copy, in);
      };
    };
  }
};

// Whether any op node of the graph writes an argument.
inline bool has_mutation(const graph::Graph& g) {
  for (const auto& n : g.nodes()) {
    if (n->mutates()) return true;
  }
  return false;
}

inline size_t count_op(const graph::Graph& g, std::string_view full_name) {
  size_t n = 0;
  for (const auto& node : g.nodes()) {
    n += node->kind == graph::NodeKind::Op && node->op->full_name() == full_name;
  }
  return n;
}

}  // namespace kiln::testing
