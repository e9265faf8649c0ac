#include "inductor/conv_activation_fusion.h"

#include "inductor/graph_rebuild.h"

#include <kiln/core/error.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace kiln::inductor {

namespace {

// Whether `v` is a 0-dim number input equal to zero.
bool is_zero(graph::Value v) {
  const graph::Node* n = v.node;
  return n != nullptr && n->kind == graph::NodeKind::Input && n->number.has_value() &&
         v.meta().sizes.empty() && n->number->to<double>() == 0.0;
}

bool returned(const graph::Graph& g, graph::Value v) {
  return std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
}

struct Match {
  const graph::Node* conv = nullptr;
  const graph::Node* mask = nullptr;  // lt(conv, 0)
};

// The convolution and mask of `where`, if it is relu of a convolution only it reads.
std::optional<Match> match_activation(const graph::Graph& g, const graph::Node& where) {
  if (!is_op(&where, "where")) return std::nullopt;
  const graph::Value cond = use_of(where, 0), value = use_of(where, 2);
  const graph::Node* mask = op_node(cond);
  const graph::Node* conv = op_node(value);
  if (mask == nullptr || conv == nullptr || !is_zero(use_of(where, 1))) return std::nullopt;
  if (!is_op(mask, "lt") || !(use_of(*mask, 0) == value) || !is_zero(use_of(*mask, 1))) {
    return std::nullopt;
  }
  if (!is_op(conv, "_convolution_packed") || conv->args.at(8).to_string() != "none") {
    return std::nullopt;
  }
  const graph::ValueMeta& out = where.outputs[0];
  const graph::ValueMeta& product = conv->outputs[0];
  if (out.sizes != product.sizes || out.strides != product.strides || out.dtype != product.dtype) {
    return std::nullopt;
  }
  // Nothing else reads the convolution or the mask.
  std::vector<graph::Node*> conv_users = g.users(value), mask_users = g.users(cond);
  std::sort(conv_users.begin(), conv_users.end());
  conv_users.erase(std::unique(conv_users.begin(), conv_users.end()), conv_users.end());
  const bool only_relu =
      conv_users.size() == 2 &&
      std::all_of(conv_users.begin(), conv_users.end(),
                  [&](const graph::Node* u) { return u == mask || u == &where; }) &&
      mask_users.size() == 1 && mask_users[0] == &where && !returned(g, value) &&
      !returned(g, cond);
  if (!only_relu) return std::nullopt;
  return Match{conv, mask};
}

}  // namespace

size_t fuse_convolution_activations(graph::Graph& graph) {
  std::unordered_map<const graph::Node*, const graph::Node*> conv_of;  // by the where node
  std::unordered_set<const graph::Node*> absorbed;                     // convolutions and masks
  for (const auto& n : graph.nodes()) {
    if (auto m = match_activation(graph, *n)) {
      conv_of.emplace(n.get(), m->conv);
      absorbed.insert(m->conv);
      absorbed.insert(m->mask);
    }
  }
  if (conv_of.empty()) return 0;
  GraphRebuild rebuild(graph);
  for (const auto& n : graph.nodes()) {
    if (absorbed.count(n.get()) != 0) continue;  // emitted at their ReLU
    auto it = conv_of.find(n.get());
    if (it == conv_of.end()) {
      rebuild.copy(*n);
      continue;
    }
    const graph::Node& conv = *it->second;
    std::vector<EmitArg> args;
    for (int i = 0; i < static_cast<int>(conv.args.size()); ++i) {
      const graph::Value v = use_of(conv, i);
      if (i == 8) {
        args.emplace_back(ops::IValue(std::string("relu")));
      } else if (v.defined()) {
        args.emplace_back(rebuild[v]);
      } else {
        args.emplace_back(conv.args.at(static_cast<size_t>(i)));
      }
    }
    const graph::Value fused = rebuild.emit("_convolution_packed", std::move(args), conv.loc).out();
    KILN_INTERNAL_ASSERT(fused.meta().strides == n->outputs[0].strides);
    rebuild.map(n->out(), fused);
  }
  graph = std::move(rebuild).finish();
  return conv_of.size();
}

}  // namespace kiln::inductor
