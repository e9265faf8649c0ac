// The built-in `inductor` backend: aot (functionalization, joint graph, min-cut partition, every
// op decomposed into prims), then both halves generated as C++ kernels (src/inductor); inference
// graphs are frozen first.
#include <kiln/aot/aot.h>
#include <kiln/backends/backend.h>
#include <kiln/inductor/inductor.h>

namespace kiln {
namespace {

[[maybe_unused]] const bool inductor_registered = [] {
  register_backend("inductor",
                   aot::aot_autograd({.forward_compiler = inductor::compile_graph,
                                      .backward_compiler = inductor::compile_graph,
                                      .inference_compiler = inductor::compile_inference_graph,
                                      .partitioner = aot::Partitioner::MinCut,
                                      .decompose = true,
                                      .joint_graph_pass = inductor::optimize_joint_graph}),
                   // Kernels take the sizes' symbols as arguments (dynamic shapes).
                   BackendTraits{.symbolic_graphs = true});
  return true;
}();

}  // namespace
}  // namespace kiln
