// The built-in aot backends (torch._dynamo's aot_eager and aot_eager_decomp_partition): the
// captured graph goes through aot (functionalization, joint graph, min-cut partition) and the
// forward and backward graphs run with the interpreter — for debugging the aot layer apart from
// code generation.
#include <kiln/aot/aot.h>
#include <kiln/backends/backend.h>

namespace kiln {
namespace {

// Each half runs as the `eager` backend runs a whole graph (looked up when used: registration
// order across files is unspecified).
CompiledGraph interpreter(const graph::Graph& graph, std::span<const Tensor> example_inputs,
                          const BackendContext& context) {
  return lookup_backend("eager")(graph, example_inputs, context);
}

[[maybe_unused]] const bool aot_registered = [] {
  register_backend("aot_eager",
                   aot::aot_autograd({.forward_compiler = interpreter,
                                      .backward_compiler = interpreter,
                                      .partitioner = aot::Partitioner::MinCut,
                                      .decompose = false}),
                   {.symbolic_graphs = true});
  register_backend("aot_eager_decomp_partition",
                   aot::aot_autograd({.forward_compiler = interpreter,
                                      .backward_compiler = interpreter,
                                      .partitioner = aot::Partitioner::MinCut,
                                      .decompose = true}),
                   {.symbolic_graphs = true});
  return true;
}();

}  // namespace
}  // namespace kiln
