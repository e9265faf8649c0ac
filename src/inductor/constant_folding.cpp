#include "inductor/constant_folding.h"

#include "inductor/graph_rebuild.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

namespace kiln::inductor {

bool is_constant_role(graph::InputRole role) {
  return role == graph::InputRole::Parameter || role == graph::InputRole::Buffer ||
         role == graph::InputRole::Constant;
}

std::unordered_set<const graph::Node*> constant_nodes(const graph::Graph& graph) {
  std::unordered_set<const graph::Node*> constant;
  for (const auto& n : graph.nodes()) {
    if (n->kind == graph::NodeKind::Input) {
      if (is_constant_role(n->role)) constant.insert(n.get());
      continue;
    }
    if (n->uses.empty() || n->has_side_effects()) continue;
    const bool all_constant =
        std::all_of(n->uses.begin(), n->uses.end(),
                    [&](const graph::TensorUse& u) { return constant.count(u.value.node) != 0; });
    if (all_constant) constant.insert(n.get());
  }
  return constant;
}

namespace {

// Constant nodes that stay in the main graph: inputs, views of inputs, and returned values.
std::unordered_set<const graph::Node*> kept_in_main(
    const graph::Graph& graph, const std::unordered_set<const graph::Node*>& constant) {
  std::unordered_set<const graph::Node*> kept;
  for (const auto& n : graph.nodes()) {
    if (constant.count(n.get()) == 0) continue;
    const bool view_of_kept = n->kind == graph::NodeKind::Op && n->op->kind == ops::OpKind::View &&
                              kept.count(n->uses.at(0).value.node) != 0;
    if (n->kind == graph::NodeKind::Input || view_of_kept) kept.insert(n.get());
  }
  // A returned value, and the views it is made of down to the value they view: the main graph
  // computes them anew on each call, so the caller never gets a view of a kept folded value.
  for (const graph::Value& v : graph.outputs()) {
    const graph::Node* n = v.node;
    while (constant.count(n) != 0 && kept.insert(n).second && n->kind == graph::NodeKind::Op &&
           n->op->kind == ops::OpKind::View) {
      n = n->uses.at(0).value.node;
    }
  }
  return kept;
}

struct ValueHash {
  size_t operator()(const graph::Value& v) const {
    return std::hash<const graph::Node*>()(v.node) * 31 + static_cast<size_t>(v.output);
  }
};

}  // namespace

ConstantSplit split_constants(const graph::Graph& graph) {
  const std::unordered_set<const graph::Node*> constant = constant_nodes(graph);
  const std::unordered_set<const graph::Node*> kept = kept_in_main(graph, constant);
  auto folded = [&](const graph::Node* n) { return constant.count(n) != 0 && kept.count(n) == 0; };

  // Folded values the main graph reads, in first-read order.
  std::vector<graph::Value> exported;
  std::unordered_map<graph::Value, size_t, ValueHash> export_index;
  for (const auto& n : graph.nodes()) {
    if (n->kind != graph::NodeKind::Op || folded(n.get())) continue;
    for (const graph::TensorUse& u : n->uses) {
      if (folded(u.value.node) && export_index.emplace(u.value, exported.size()).second) {
        exported.push_back(u.value);
      }
    }
  }

  ConstantSplit split;
  if (exported.empty()) {
    split.main = graph.clone();
    return split;
  }

  // The constant graph: the nodes (and inputs) the folded values need.
  std::unordered_set<const graph::Node*> needed;
  std::vector<const graph::Node*> pending;
  for (const graph::Value& v : exported) pending.push_back(v.node);
  while (!pending.empty()) {
    const graph::Node* n = pending.back();
    pending.pop_back();
    if (!needed.insert(n).second) continue;
    for (const graph::TensorUse& u : n->uses) pending.push_back(u.value.node);
  }
  GraphRebuild constants(graph);
  const std::vector<graph::Node*> inputs = graph.inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (needed.count(inputs[i]) == 0) continue;
    constants.copy(*inputs[i]);
    split.constant_inputs.push_back(i);
  }
  for (const auto& n : graph.nodes()) {
    if (n->kind == graph::NodeKind::Op && needed.count(n.get()) != 0) constants.copy(*n);
  }
  std::vector<graph::Value> constant_outputs;
  for (const graph::Value& v : exported) constant_outputs.push_back(constants[v]);
  split.constants = std::move(constants.graph());
  split.constants.set_outputs(std::move(constant_outputs));

  GraphRebuild main(graph);
  for (const graph::Node* in : inputs) main.copy(*in);
  for (const graph::Value& v : exported) {
    graph::Node& in = main.add_input(graph::InputRole::Constant,
                                     fmt::format("folded {}", v.node->name), v.meta());
    main.map(v, in.out());
  }
  for (const auto& n : graph.nodes()) {
    if (n->kind == graph::NodeKind::Op && !folded(n.get())) main.copy(*n);
  }
  split.main = std::move(main).finish();
  graph::dead_code_elimination()->run(split.main);
  return split;
}

}  // namespace kiln::inductor
