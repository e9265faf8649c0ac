#pragma once
// Constant folding for inference freezing: the part of a graph computed from module parameters,
// buffers and captured constants only, split into a graph of its own whose results the rest of
// the graph takes as inputs.
#include <kiln/graph/graph.h>

#include <unordered_set>
#include <vector>

namespace kiln::inductor {

// Whether an input of this role holds the same tensor from call to call (parameters, buffers,
// captured tensors), so that values computed from it alone can be kept between calls.
bool is_constant_role(graph::InputRole role);

// Op nodes computed from constant-role inputs only: every tensor argument constant, at least one
// tensor argument, and no side effects (a random draw or a write must happen on every call).
std::unordered_set<const graph::Node*> constant_nodes(const graph::Graph& graph);

struct ConstantSplit {
  // Inputs: the source graph's constant-role inputs it reads (`constant_inputs`, their indices
  // among the source's inputs). Outputs: the folded values.
  graph::Graph constants;
  std::vector<size_t> constant_inputs;
  // Inputs: the source graph's inputs, in order, then one per folded value (role Constant).
  // Outputs: the source's.
  graph::Graph main;
  size_t num_folded() const { return constants.outputs().size(); }
};

// Splits off the constant nodes whose values the rest reads. Views of inputs stay in the main
// graph (the lowering folds them into indexing for free), as do constant nodes the graph returns
// (a returned value must be new on each call, never a kept one). Nothing folded: num_folded() 0.
ConstantSplit split_constants(const graph::Graph& graph);

}  // namespace kiln::inductor
