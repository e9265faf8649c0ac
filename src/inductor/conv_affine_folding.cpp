#include "inductor/conv_affine_folding.h"

#include "inductor/constant_folding.h"
#include "inductor/graph_rebuild.h"

#include <kiln/core/error.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace kiln::inductor {

namespace {

enum class Link { Scale, Shift, NegativeShift };

struct AffineStep {
  const graph::Node* node = nullptr;
  Link link = Link::Scale;
  graph::Value operand;  // the per-channel constant
};

struct Chain {
  const graph::Node* convolution = nullptr;
  std::vector<AffineStep> steps;
};

// The node reading `v` when it is its only reader (once) and `v` is no graph output.
const graph::Node* sole_reader(const graph::Graph& g, graph::Value v) {
  const std::vector<graph::Node*> users = g.users(v);
  if (users.size() != 1) return nullptr;
  if (std::count_if(users[0]->uses.begin(), users[0]->uses.end(),
                    [&](const graph::TensorUse& u) { return u.value == v; }) != 1) {
    return nullptr;
  }
  if (std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end()) return nullptr;
  return users[0];
}

bool alpha_is_one(const graph::Node& n) { return n.args.at(2).to_scalar().to<double>() == 1.0; }

// `n` as a link after `v`: v * c, c * v, v + c, c + v, v - c with c constant and per channel,
// keeping v's layout and dtype.
std::optional<AffineStep> link_after(const graph::Node& n, graph::Value v,
                                     const std::unordered_set<const graph::Node*>& constant) {
  if (n.uses.size() != 2 || n.outputs.size() != 1) return std::nullopt;
  const graph::ValueMeta& out = n.outputs[0];
  const graph::ValueMeta& in = v.meta();
  if (!(out.sizes == in.sizes && out.strides == in.strides && out.dtype == in.dtype)) {
    return std::nullopt;
  }
  const size_t k = n.uses[0].value == v ? 0 : 1;
  const graph::Value other = n.uses[1 - k].value;
  if (constant.count(other.node) == 0 || !is_per_channel(other.meta(), in.sizes) ||
      other.meta().dtype != in.dtype) {
    return std::nullopt;
  }
  if (is_op(&n, "mul")) return AffineStep{&n, Link::Scale, other};
  if (is_op(&n, "add") && alpha_is_one(n)) return AffineStep{&n, Link::Shift, other};
  if (is_op(&n, "sub") && alpha_is_one(n) && k == 0)
    return AffineStep{&n, Link::NegativeShift, other};
  return std::nullopt;
}

std::optional<Chain> chain_after(const graph::Graph& g, const graph::Node& conv,
                                 const std::unordered_set<const graph::Node*>& constant) {
  if (!is_op(&conv, "convolution") || conv.args.at(6).to_bool()) return std::nullopt;
  for (const graph::TensorUse& u : conv.uses) {
    if (u.arg != 0 && constant.count(u.value.node) == 0) return std::nullopt;
  }
  Chain chain{&conv, {}};
  graph::Value v{const_cast<graph::Node*>(&conv), 0};
  while (const graph::Node* reader = sole_reader(g, v)) {
    auto step = link_after(*reader, v, constant);
    if (!step) break;
    chain.steps.push_back(*step);
    v = graph::Value{const_cast<graph::Node*>(reader), 0};
  }
  if (chain.steps.empty()) return std::nullopt;
  return chain;
}

graph::Value tensor_argument(const GraphRebuild& rebuild, const graph::Node& n, int arg) {
  for (const graph::TensorUse& u : n.uses) {
    if (u.arg == arg) return rebuild[u.value];
  }
  return {};
}

// The convolution with the chain folded into its weight and bias.
graph::Value emit_folded(GraphRebuild& rebuild, const Chain& chain) {
  const graph::Node& conv = *chain.convolution;
  const SymInt channels = conv.outputs[0].sizes.at(1);
  graph::Value weight = tensor_argument(rebuild, conv, 1);
  graph::Value bias = tensor_argument(rebuild, conv, 2);
  // [C, 1, 1, ...]: a scale along the weight's output-channel dim.
  std::vector<SymInt> weight_shape(weight.meta().sizes.size(), SymInt(1));
  weight_shape[0] = channels;
  for (const AffineStep& s : chain.steps) {
    const graph::SourceLoc loc = s.node->loc;
    const graph::Value c = rebuild[s.operand];
    const graph::Value per_channel =
        rebuild.emit("view", {c, ops::IValue(std::vector<SymInt>{channels})}, loc).out();
    switch (s.link) {
      case Link::Scale: {
        const graph::Value scale = rebuild.emit("view", {c, ops::IValue(weight_shape)}, loc).out();
        weight = rebuild.emit("mul", {weight, scale}, loc).out();
        if (bias.defined()) bias = rebuild.emit("mul", {bias, per_channel}, loc).out();
        break;
      }
      case Link::Shift:
        bias = bias.defined() ? rebuild.emit("add", {bias, per_channel}, loc).out() : per_channel;
        break;
      case Link::NegativeShift:
        bias = bias.defined() ? rebuild.emit("sub", {bias, per_channel}, loc).out()
                              : rebuild.emit("neg", {per_channel}, loc).out();
        break;
    }
  }
  std::vector<EmitArg> args;
  for (int i = 0; i < static_cast<int>(conv.args.size()); ++i) {
    if (i == 1) {
      args.emplace_back(weight);
    } else if (i == 2) {
      args.emplace_back(bias);
    } else if (i == 0) {
      args.emplace_back(tensor_argument(rebuild, conv, 0));
    } else {
      args.emplace_back(conv.args[static_cast<size_t>(i)]);
    }
  }
  return rebuild.emit("convolution", std::move(args), conv.loc).out();
}

}  // namespace

size_t fold_affine_into_convolutions(graph::Graph& graph) {
  const std::unordered_set<const graph::Node*> constant = constant_nodes(graph);
  std::unordered_map<const graph::Node*, Chain> chain_ending_at;
  std::unordered_set<const graph::Node*> folded;  // convolutions and links, emitted at the end
  for (const auto& n : graph.nodes()) {
    if (auto chain = chain_after(graph, *n, constant)) {
      folded.insert(n.get());
      for (const AffineStep& s : chain->steps) folded.insert(s.node);
      chain_ending_at.emplace(chain->steps.back().node, std::move(*chain));
    }
  }
  if (chain_ending_at.empty()) return 0;
  GraphRebuild rebuild(graph);
  for (const auto& n : graph.nodes()) {
    auto it = chain_ending_at.find(n.get());
    if (it != chain_ending_at.end()) {
      const graph::Value conv = emit_folded(rebuild, it->second);
      KILN_INTERNAL_ASSERT(conv.meta().sizes == n->outputs[0].sizes &&
                           conv.meta().strides == n->outputs[0].strides);
      rebuild.map(n->out(), conv);
    } else if (folded.count(n.get()) == 0) {
      rebuild.copy(*n);
    }
  }
  graph = std::move(rebuild).finish();
  return chain_ending_at.size();
}

}  // namespace kiln::inductor
