#pragma once
// The backward engine: runs the graph below the root edges in dependency order, iteratively.
#include <kiln/autograd/node.h>

#include <vector>

namespace kiln::autograd {

// Runs backward from roots (with their gradients). When `captures` is non-empty, returns the
// gradient arriving at each captured edge (undefined where none arrives) and runs only the part
// of the graph that leads to them, without accumulating into leaves.
std::vector<Tensor> run_backward(const std::vector<Edge>& roots, const std::vector<Tensor>& grads,
                                 bool keep_graph, bool create_graph,
                                 const std::vector<Edge>& captures, bool accumulate);

}  // namespace kiln::autograd
