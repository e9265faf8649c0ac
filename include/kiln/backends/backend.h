#pragma once
// The backend registry (DESIGN.md §6, torch._dynamo's backends): a backend turns one captured graph
// and example inputs into a callable that runs it. `eager` runs the graph with the interpreter;
// `inductor` (the default once the compiler lands) generates code. Users add their own with
// register_backend.
#include <kiln/graph/graph.h>

#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace kiln {

// What a compiled graph is: one tensor per graph input in, one per graph output out.
using CompiledGraph = std::function<std::vector<Tensor>(std::span<const Tensor> inputs)>;

// What a backend receives beside the graph: compile()'s mode and options, and a name for the graph
// in logs and errors ("graph 0 of f").
struct BackendContext {
  std::string mode = "default";
  std::map<std::string, std::string> options;
  std::string graph_name;
};

// A backend: graph and example inputs (real tensors, one per input node) to a callable. It may
// keep the graph (by copy) and the example inputs' metadata, not the inputs themselves.
using Backend =
    std::function<CompiledGraph(const graph::Graph& graph, std::span<const Tensor> example_inputs,
                                const BackendContext& context)>;

// What a backend takes beyond static graphs.
struct BackendTraits {
  // Graphs traced with symbolic input sizes (dynamic shapes, docs/DYNAMIC.md), compiled once for
  // every size their symbols stand for. compile() hands a backend without it one static graph per
  // size instead.
  bool symbolic_graphs = false;
};

// A backend with the name and traits it goes by: what a backend that wraps another (compiled DDP's
// bucket splitter) passes to compile() so that logs, errors and symbolic graphs treat it as the
// backend it wraps.
struct NamedBackend {
  std::string name;
  Backend backend;
  BackendTraits traits;
};

// Adds a backend under `name`; raises kiln::Error if the name is taken or empty.
void register_backend(const std::string& name, Backend backend, BackendTraits traits = {});
// The registered names, sorted ("eager", ...).
std::vector<std::string> list_backends();
// The backend called `name`; raises kiln::Error listing the registered names when there is none.
const Backend& lookup_backend(const std::string& name);
// The traits `name` was registered with; raises as lookup_backend does.
BackendTraits backend_traits(const std::string& name);

// Runs `backend` on a graph, turning an exception it throws into a kiln::Error that names the
// backend and context.graph_name, with the original message.
CompiledGraph run_backend(const std::string& backend_name, const Backend& backend,
                          const graph::Graph& graph, std::span<const Tensor> example_inputs,
                          const BackendContext& context);

}  // namespace kiln
