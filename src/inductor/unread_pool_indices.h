#pragma once
// Max pooling whose indices nothing reads (inference graphs; a training graph saves them for the
// backward) runs as _max_pool2d_values: the kernels write the values only. The int64 indices are
// four times a bfloat16 value's bytes: resnet18's max pooling on an H100 wrote 51 MB of them.
#include <kiln/graph/graph.h>

#include <cstddef>

namespace kiln::inductor {

// Rewrites each max_pool2d_with_indices whose second output is neither read nor returned;
// returns how many.
size_t drop_unread_pool_indices(graph::Graph& graph);

}  // namespace kiln::inductor
