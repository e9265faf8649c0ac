#pragma once
// A ReLU after a convolution becomes the convolution's oneDNN post-op: the convolution writes its
// output once, activated, instead of a pointwise kernel reading and writing it again (PyTorch's
// inductor does this through mkldnn's fused convolutions under freezing).
#include <kiln/graph/graph.h>

namespace kiln::inductor {

// Rewrites relu(_convolution_packed(...)) -- in prims where(lt(conv, 0), 0, conv), the zeros
// numbers the op layer wrapped -- into _convolution_packed(..., activation="relu") where nothing
// else reads the convolution's output. Returns the number of rewrites.
size_t fuse_convolution_activations(graph::Graph& graph);

}  // namespace kiln::inductor
