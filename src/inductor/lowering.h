#pragma once
// Lowering (DESIGN.md §5): a graph of prims to the loop-level IR. Pointwise prims compose into
// loop bodies (a producer is inlined into its readers unless several read it); views fold into
// index expressions over the storage they view (views never copy); reductions become reduction
// loops with their pointwise prologue inlined; other prims are extern calls on buffers.
#include "inductor/loop_ir.h"

#include <kiln/graph/graph.h>

namespace kiln::inductor {

struct LoweringOptions {
  // max-autotune: small matrix products also as generated kernels (gemm_alternative.h).
  bool gemm_alternatives = false;
};

// Whether the inductor computes `op` (a prim) with generated loops (a pointwise function, a
// conversion, a reduction it lowers, a creation, a view) rather than an extern call.
bool generates_loops(const ops::OpDef& op);

// Raises kiln::Error naming the node for what it cannot lower.
Program lower(const graph::Graph& graph, const LoweringOptions& options = {});

}  // namespace kiln::inductor
