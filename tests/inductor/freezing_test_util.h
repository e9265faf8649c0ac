#pragma once
// Helpers for the freezing and extern-epilogue tests: a backend that runs aot + the inductor and
// keeps the graphs of prims it was handed, and op counts of a graph.
#include <kiln/aot/aot.h>
#include <kiln/graph/graph.h>
#include <kiln/inductor/inductor.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::testing {

// The prims graphs an inductor run received: forward (or inference) and backward graphs, in the
// order they were compiled.
struct RecordedGraphs {
  std::vector<graph::Graph> graphs;
  std::vector<std::vector<Tensor>> examples;  // each graph's example inputs
};

// The inductor backend (aot with every op as prims and the inductor's joint-graph rewrites, then
// the inductor), recording each graph before the inductor compiles it. Inference graphs go through
// compile_inference_graph.
inline Backend recording_inductor(std::shared_ptr<RecordedGraphs> record) {
  auto recorded = [record](Backend inner) -> Backend {
    return [record, inner](const graph::Graph& g, std::span<const Tensor> examples,
                           const BackendContext& context) {
      record->graphs.push_back(g.clone());
      record->examples.emplace_back(examples.begin(), examples.end());
      return inner(g, examples, context);
    };
  };
  return aot::aot_autograd({.forward_compiler = recorded(inductor::compile_graph),
                            .backward_compiler = recorded(inductor::compile_graph),
                            .inference_compiler = recorded(inductor::compile_inference_graph),
                            .decompose = true,
                            .joint_graph_pass = inductor::optimize_joint_graph});
}

// Compile options running recording_inductor with `options`.
inline CompileOptions recording(const std::shared_ptr<RecordedGraphs>& record,
                                std::map<std::string, std::string> options = {}) {
  return {.backend = recording_inductor(record), .options = std::move(options)};
}

// Op nodes calling `full_name` ("addmm", "convolution").
inline size_t count_ops(const graph::Graph& g, std::string_view full_name) {
  size_t n = 0;
  for (const auto& node : g.nodes()) {
    if (node->kind == graph::NodeKind::Op && node->op->full_name() == full_name) ++n;
  }
  return n;
}

}  // namespace kiln::testing
