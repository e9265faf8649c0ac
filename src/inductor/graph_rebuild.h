#pragma once
// Rewrites that put new nodes in the middle of a graph build a new graph (a Graph only appends):
// GraphRebuild copies a source graph's nodes in order, and a rewrite emits nodes of its own in
// place of some of them.
#include <kiln/graph/graph.h>

#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

namespace kiln::inductor {

// An argument of an emitted op: a value of the graph being built, or a constant.
using EmitArg = std::variant<graph::Value, ops::IValue>;

class GraphRebuild {
 public:
  explicit GraphRebuild(const graph::Graph& source) : source_(source) {}

  // The value of the new graph standing for a source value (which must have been copied or
  // mapped already).
  graph::Value operator[](graph::Value source) const;
  // Makes `now` stand for the source value `source` in later copies and in the outputs.
  void map(graph::Value source, graph::Value now);
  // Copies an input or op node of the source, its uses mapped; maps its outputs to the copy's.
  graph::Node& copy(const graph::Node& source);
  // Appends an input node (not one of the source's).
  graph::Node& add_input(graph::InputRole role, std::string label, graph::ValueMeta meta);
  // Appends a node calling `op_name` (a full schema name) with every schema argument given, in
  // order; its output metadata comes from the op's meta function.
  graph::Node& emit(std::string_view op_name, std::vector<EmitArg> args, graph::SourceLoc loc = {});
  // Copies an op node of the source, its uses mapped, with its output metadata derived again by
  // the op's meta function (its inputs' layouts may have changed); maps its outputs to the copy's.
  // Throws what the meta function throws for the new inputs.
  graph::Node& rederive(const graph::Node& source);
  // The built graph, returning what the source returns (mapped).
  graph::Graph finish() &&;
  graph::Graph& graph() { return graph_; }

 private:
  // An op's argument stack with meta tensors standing for graph values.
  struct TwinStack {
    ops::Stack stack;
    std::unordered_map<const TensorImpl*, graph::Value> value_of_twin;
    Tensor twin_of(graph::Value v);
    // Where the op's outputs live, as the dispatcher decides (graph::output_device's rule): a
    // device argument's, else the first tensor value's, a 0-dim CPU one giving way to another.
    Device output_device() const;
  };
  graph::Node& add_with_meta(const ops::OpDef& op, TwinStack twins, graph::SourceLoc loc);

  const graph::Graph& source_;
  graph::Graph graph_;
  std::unordered_map<const graph::Node*, std::vector<graph::Value>> mapped_;
};

// Whether `meta` broadcasts along channel dimension 1 of a value of `out_sizes` only: every size 1
// except (right-aligned onto out_sizes) dimension 1's, and of `out_sizes` rank at most.
bool is_per_channel(const graph::ValueMeta& meta, const SymDimVector& out_sizes);

// Whether `meta` is a 4-d value dense in channels-last order at offset 0 (core's
// is_contiguous_in: the strides of size-1 dimensions are not compared).
bool is_channels_last(const graph::ValueMeta& meta);
// Core's suggest_memory_format of a value at offset 0 (Contiguous for others and for symbolic
// sizes): the layout a convolution reading it computes in (conv::output_format).
MemoryFormat suggest_memory_format(const graph::ValueMeta& meta);

// The op node producing a value, or null for an input.
inline const graph::Node* op_node(graph::Value v) {
  return v.node != nullptr && v.node->kind == graph::NodeKind::Op ? v.node : nullptr;
}
// The value node `n` reads as its tensor argument `arg` (not an element of a tensor list), or an
// undefined value.
graph::Value use_of(const graph::Node& n, int arg);
// Whether node `n` is a call of the op `full_name`.
bool is_op(const graph::Node* n, std::string_view full_name);

}  // namespace kiln::inductor
