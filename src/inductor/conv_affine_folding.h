#pragma once
// BatchNorm folded into the preceding convolution, for inference freezing. In a graph of prims an
// eval-mode batch norm is a per-channel affine chain on the convolution's output (mul by a scale,
// add of a shift, each broadcast along channel dim 1); with constant operands and a constant
// weight the chain folds into the convolution's weight (scaled along its output-channel dim) and
// bias, computed by new nodes that constant folding then moves out of the graph.
#include <kiln/graph/graph.h>

namespace kiln::inductor {

// Folds every such chain after a (not transposed) convolution whose output, and each link's, has
// no other reader; returns the number of convolutions rewritten.
size_t fold_affine_into_convolutions(graph::Graph& graph);

}  // namespace kiln::inductor
