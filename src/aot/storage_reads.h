#pragma once
// as_strided addresses its input's storage, not the input's elements. In a traced graph that
// input may be a view of another value (autograd re-deriving a saved tensor from a live view of
// its storage), and once the graph is partitioned such a view can become a saved value that the
// forward returns as a tensor of its own (the inductor materializes outputs), whose storage holds
// only the view's elements. Pointing every as_strided at the root of its input's view chain keeps
// the dependency on the storage explicit, so the partitioner saves (or recomputes) the root.
#include <kiln/graph/graph.h>

namespace kiln::aot {

// Rewrites, in place, each as_strided node's input to the first value of its view chain that is
// not itself a view's output. Returns how many inputs changed.
int root_storage_reads(graph::Graph& graph);

}  // namespace kiln::aot
