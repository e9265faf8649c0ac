#pragma once
// Which forward ops the partitioner may recompute in the backward instead of saving their
// outputs: views, and ops that are pointwise all the way down to prims (so that a code generator
// fuses the recomputation into the backward's kernels). Reductions, GEMMs, convolutions and
// random draws are never recomputed.
#include <kiln/graph/graph.h>

namespace kiln::aot {

bool is_recomputable(const graph::Node& node);

}  // namespace kiln::aot
