// The built-in `eager` backend (torch.compile(backend="eager")): runs the captured graph with the
// interpreter, op by op through the eager kernels. Registered at static initialization, so it is
// always listed.
#include "capture/symbolic_interpreter.h"

#include <kiln/backends/backend.h>

#include <memory>

namespace kiln {
namespace {

CompiledGraph eager_backend(const graph::Graph& graph, std::span<const Tensor> /*example_inputs*/,
                            const BackendContext& /*context*/) {
  // The callable outlives the capture's graph: it owns a copy, shared so the callable stays
  // copyable (std::function requires it).
  if (graph::has_symbolic_sizes(graph)) return capture::symbolic_interpreter(graph);
  auto owned = std::make_shared<const graph::Graph>(graph.clone());
  return [owned](std::span<const Tensor> inputs) { return graph::interpret(*owned, inputs); };
}

[[maybe_unused]] const bool eager_registered = [] {
  register_backend("eager", eager_backend, {.symbolic_graphs = true});
  return true;
}();

}  // namespace
}  // namespace kiln
