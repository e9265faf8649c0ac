#pragma once
// Layout optimization for inference freezing: oneDNN's convolutions read and write row-major
// (NCHW) activations through reorders into its blocked layout, two extra passes over every
// activation per convolution; channels-last (NHWC) activations it reads and writes as they are.
// Converting a convolution net's input to channels-last once lets that layout flow through every
// convolution, pointwise op and pool (their meta functions keep it), and the graph's outputs are
// converted back to the layouts eager code returns.
#include <kiln/graph/graph.h>

#include <string>

namespace kiln::inductor {

// Rewrites a graph whose 2-d float32 CPU convolutions have constant weights (or any weights, with
// `constant_weights_only` false: a training joint graph, whose backward convolutions then follow
// too) so that they read channels-last activations; every other node's layout is derived again
// from its inputs'. Leaves
// the graph as it is (returning 0) where a layout could change a value or not be derived: a node
// that mutates or reads storage directly (as_strided), or a view a new layout does not allow.
// Returns the number of convolutions that now read channels-last inputs; where that is 0 for a
// graph with convolutions, `why_not` (if given) says why.
size_t convolutions_to_channels_last(graph::Graph& graph, bool constant_weights_only = true,
                                     std::string* why_not = nullptr);

}  // namespace kiln::inductor
