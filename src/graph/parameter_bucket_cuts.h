#pragma once
// Where to cut a graph so that each piece's parameters fill about one DDP gradient bucket
// (DDPOptimizer's bucketing): gradients become ready in reverse order of parameter use, so the
// op nodes are walked from the last to the first, adding up the bytes of the trainable parameters
// each one reads first (directly or through views of them, as a linear layer reads its weight's
// transpose); once the running total reaches the current bucket's limit, the next node
// that reads a new parameter starts a new bucket, and a cut goes right after it. The k-th bucket
// closes at size_limits_bytes[k] (the last limit repeats), as DistributedDataParallel's buckets
// do, the first one being smaller.
#include <kiln/graph/graph.h>

#include <cstddef>
#include <vector>

namespace kiln::graph {

// Op positions to cut at (ascending; see split_graph), none when the parameters fit one bucket.
std::vector<size_t> parameter_bucket_cuts(const Graph& graph,
                                          const std::vector<size_t>& size_limits_bytes);

}  // namespace kiln::graph
