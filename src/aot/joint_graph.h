#pragma once
// trace_joint with the graph's example inputs: scalars captured as 0-dim tensors ("wrapped
// numbers", which do not promote the other operand's dtype) keep that property on their proxies,
// so that the re-traced ops infer the dtypes capture recorded.
#include <kiln/aot/aot.h>

#include <span>

namespace kiln::aot {

JointGraph trace_joint_with_examples(const graph::Graph& graph, bool training, bool decompose,
                                     std::span<const Tensor> examples);

}  // namespace kiln::aot
