// The partitioner: splits a joint graph into the forward and backward graphs. Both strategies
// decide which tangent-independent values the backward takes from the forward ("saved"); the
// backward recomputes every other forward value it needs from those.
//
// Min-cut (AOTAutograd's min_cut_rematerialization_partition, rebuilt): each tangent-independent
// node n is split into n_in -> n_out with capacity = bytes of its outputs (the cost of saving it);
// values flow from producers to readers with infinite capacity; the source feeds inputs and nodes
// that may not be recomputed (reductions, GEMMs, random draws), and every value a backward node
// reads drains into the sink. A minimum source-sink cut is then a cheapest set of values to save
// such that everything else the backward needs is recomputable from them.
#include "aot/max_flow.h"
#include "aot/recompute_policy.h"
#include "aot/symbols_read.h"

#include <kiln/aot/aot.h>
#include <kiln/core/error.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace kiln::aot {

namespace {

int64_t value_bytes(const graph::ValueMeta& m) {
  int64_t n = 1;
  for (const SymInt& s : m.sizes) n *= s.is_symbolic() ? 1 : s.raw();
  return n * static_cast<int64_t>(itemsize(m.dtype));
}

using ValueKey = std::pair<const graph::Node*, int>;
ValueKey key(graph::Value v) { return {v.node, v.output}; }

struct Analysis {
  std::vector<const graph::Node*> nodes;
  std::unordered_map<const graph::Node*, size_t> index;
  std::vector<JointInput> kind_of_input;  // per node (inputs only)
  std::vector<bool> is_input;
  std::vector<bool> tangent_dependent;
  std::vector<std::vector<size_t>> users;

  explicit Analysis(const JointGraph& joint) {
    size_t input = 0;
    for (const auto& n : joint.graph.nodes()) {
      index.emplace(n.get(), nodes.size());
      nodes.push_back(n.get());
      const bool in = n->kind == graph::NodeKind::Input;
      is_input.push_back(in);
      kind_of_input.push_back(in ? joint.input_kinds.at(input++) : JointInput::Primal);
      bool dependent = in && kind_of_input.back() == JointInput::Tangent;
      for (const graph::TensorUse& u : n->uses) {
        dependent = dependent || tangent_dependent[index.at(u.value.node)];
      }
      tangent_dependent.push_back(dependent);
    }
    users.resize(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (const graph::TensorUse& u : nodes[i]->uses) {
        std::vector<size_t>& list = users[index.at(u.value.node)];
        if (list.empty() || list.back() != i) list.push_back(i);
      }
    }
  }
};

// Bytes the backward holds if it keeps value v of node n: nothing for parameters, buffers and
// constants, which are held anyway.
int64_t save_cost(const graph::Node& n, int output) {
  if (n.kind == graph::NodeKind::Input && n.role != graph::InputRole::UserArg) return 0;
  return value_bytes(n.outputs[static_cast<size_t>(output)]);
}

// The min cut: which tangent-independent values to save. Each node has an "in" vertex and one
// vertex per output, joined by an edge of the output's size: cutting it saves that output, and a
// node whose "in" vertex falls on the sink's side is recomputed whole.
std::set<ValueKey> min_cut_saved(const Analysis& a, const std::vector<graph::Value>& grads) {
  const size_t n = a.nodes.size();
  std::vector<size_t> first_output(n);
  size_t vertices = 0;
  for (size_t i = 0; i < n; ++i) {
    first_output[i] = vertices + 1;
    vertices += 1 + a.nodes[i]->outputs.size();
  }
  FlowNetwork net(vertices + 2);
  const size_t source = vertices, sink = vertices + 1;
  auto in = [&](size_t i) { return first_output[i] - 1; };
  auto out = [&](size_t i, int o) { return first_output[i] + static_cast<size_t>(o); };
  for (size_t i = 0; i < n; ++i) {
    if (a.tangent_dependent[i]) continue;
    const graph::Node& node = *a.nodes[i];
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      net.add_edge(in(i), out(i, static_cast<int>(o)), save_cost(node, static_cast<int>(o)));
    }
    if (a.is_input[i] || !is_recomputable(node))
      net.add_edge(source, in(i), FlowNetwork::kInfinite);
    for (size_t u : a.users[i]) {
      for (const graph::TensorUse& use : a.nodes[u]->uses) {
        if (use.value.node != &node) continue;
        net.add_edge(out(i, use.value.output), a.tangent_dependent[u] ? sink : in(u),
                     FlowNetwork::kInfinite);
      }
    }
  }
  for (const graph::Value& g : grads) {
    const size_t i = a.index.at(g.node);
    if (!a.tangent_dependent[i]) net.add_edge(out(i, g.output), sink, FlowNetwork::kInfinite);
  }
  net.max_flow(source, sink);
  const std::vector<bool> side = net.source_side(source);
  std::set<ValueKey> saved;
  for (size_t i = 0; i < n; ++i) {
    if (a.tangent_dependent[i] || !side[in(i)]) continue;
    for (size_t o = 0; o < a.nodes[i]->outputs.size(); ++o) {
      if (!side[out(i, static_cast<int>(o))]) saved.insert({a.nodes[i], static_cast<int>(o)});
    }
  }
  return saved;
}

// A graph made of some of `g`'s nodes: `inputs` become input nodes (in order), then the selected
// op nodes are copied in order with their uses remapped.
graph::Graph extract(const Analysis& a, const std::vector<graph::Value>& inputs,
                     const std::vector<std::string>& labels, const std::vector<bool>& selected,
                     const std::vector<graph::Value>& outputs) {
  graph::Graph out;
  std::map<ValueKey, graph::Value> remap;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const graph::Node& src = *inputs[k].node;
    const graph::InputRole role =
        src.kind == graph::NodeKind::Input ? src.role : graph::InputRole::UserArg;
    remap[key(inputs[k])] = out.add_input(role, labels[k], inputs[k].meta()).out();
  }
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    if (!selected[i]) continue;
    const graph::Node& n = *a.nodes[i];
    std::vector<graph::TensorUse> uses = n.uses;
    for (graph::TensorUse& u : uses) u.value = remap.at(key(u.value));
    graph::Node& copy = out.add_op(*n.op, n.args, std::move(uses), n.outputs, n.loc);
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      remap[{&n, static_cast<int>(o)}] = copy.out(static_cast<int>(o));
    }
  }
  std::vector<graph::Value> mapped;
  for (const graph::Value& v : outputs) mapped.push_back(remap.at(key(v)));
  out.set_outputs(std::move(mapped));
  return out;
}

// The backward binds each size symbol from a dimension of its inputs that is that symbol (PyTorch
// passes saved symints instead). A symbol it reads that no saved value or tangent carries as a
// whole dimension (an input's size that a reduction's or a view's gradient expands back to, a
// tangent of size s1 + s2) is given to it by saving a joint input (held anyway) with that
// dimension, else a forward value.
void save_values_binding_symbols(const Analysis& a, const std::vector<bool>& in_backward,
                                 std::vector<ValueKey>& saved_keys,
                                 std::map<ValueKey, graph::Value>& saved_values) {
  std::vector<const graph::Node*> backward_nodes;
  std::vector<graph::Value> available;
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    if (in_backward[i]) backward_nodes.push_back(a.nodes[i]);
    if (a.is_input[i] && a.kind_of_input[i] == JointInput::Tangent) {
      available.push_back(graph::Value{const_cast<graph::Node*>(a.nodes[i]), 0});
    }
  }
  for (const auto& [k, v] : saved_values) available.push_back(v);
  // The inputs' own sizes count too: an input dimension that is an expression is checked
  // against the symbols bound elsewhere.
  for (const graph::Value& v : available) backward_nodes.push_back(v.node);
  std::set<int64_t> missing = symbols_read(backward_nodes);
  for (int64_t bound : symbols_bound(available)) missing.erase(bound);
  // Nodes are in execution order, inputs first: inputs are preferred.
  for (size_t i = 0; i < a.nodes.size() && !missing.empty(); ++i) {
    if (a.tangent_dependent[i]) continue;
    for (size_t o = 0; o < a.nodes[i]->outputs.size(); ++o) {
      const graph::Value v{const_cast<graph::Node*>(a.nodes[i]), static_cast<int>(o)};
      bool binds_missing = false;
      for (int64_t s : symbols_bound({v})) binds_missing = binds_missing || missing.erase(s) > 0;
      if (binds_missing && !saved_values.count(key(v))) {
        saved_keys.push_back(key(v));
        saved_values[key(v)] = v;
      }
    }
  }
}

}  // namespace

Partition partition(const JointGraph& joint, Partitioner partitioner) {
  const Analysis a(joint);
  const size_t n = a.nodes.size();
  const std::vector<graph::Value>& all_outputs = joint.graph.outputs();
  const size_t num_forward_outputs = joint.num_computed + joint.mutated_inputs.size();
  const std::vector<graph::Value> forward_outputs(all_outputs.begin(),
                                                  all_outputs.begin() + num_forward_outputs);
  const std::vector<graph::Value> grads(all_outputs.begin() + num_forward_outputs,
                                        all_outputs.end());

  std::set<ValueKey> cut;
  if (partitioner == Partitioner::MinCut) cut = min_cut_saved(a, grads);
  // The backward: from the gradients back to available values, tangents and inputs.
  std::vector<bool> in_backward(n, false);
  std::vector<ValueKey> saved_keys;
  std::map<ValueKey, graph::Value> saved_values;
  std::vector<size_t> stack;
  auto reach = [&](graph::Value v) {
    const size_t i = a.index.at(v.node);
    // Save-all takes every forward value from the forward; min-cut the cut's values, and (as
    // a safeguard) values of nodes that may not be recomputed.
    const bool take_from_forward =
        !a.tangent_dependent[i] && (partitioner == Partitioner::SaveAll || cut.count(key(v)) ||
                                    (a.is_input[i] && a.kind_of_input[i] != JointInput::Tangent) ||
                                    !is_recomputable(*a.nodes[i]));
    if (take_from_forward) {
      if (!saved_values.count(key(v))) {
        saved_keys.push_back(key(v));
        saved_values[key(v)] = v;
      }
      return;
    }
    if (a.is_input[i] || in_backward[i]) return;
    in_backward[i] = true;
    stack.push_back(i);
  };
  for (const graph::Value& g : grads) reach(g);
  while (!stack.empty()) {
    const size_t i = stack.back();
    stack.pop_back();
    for (const graph::TensorUse& u : a.nodes[i]->uses) reach(u.value);
  }
  save_values_binding_symbols(a, in_backward, saved_keys, saved_values);

  Partition p;
  // Saved inputs are passed straight through; saved activations become forward outputs.
  std::vector<graph::Value> saved_activations;
  for (const ValueKey& k : saved_keys) {
    const graph::Value v = saved_values.at(k);
    if (a.is_input[a.index.at(v.node)]) continue;
    saved_activations.push_back(v);
  }
  // The forward: what its outputs, the saved activations and the random draws need.
  std::vector<bool> in_forward(n, false);
  for (const graph::Value& v : forward_outputs) stack.push_back(a.index.at(v.node));
  for (const graph::Value& v : saved_activations) stack.push_back(a.index.at(v.node));
  for (size_t i = 0; i < n; ++i) {
    if (!a.tangent_dependent[i] && a.nodes[i]->has_side_effects()) stack.push_back(i);
  }
  while (!stack.empty()) {
    const size_t i = stack.back();
    stack.pop_back();
    if (a.is_input[i] || in_forward[i]) continue;
    KILN_CHECK(!a.tangent_dependent[i], "aot: internal error: the forward needs a tangent");
    in_forward[i] = true;
    for (const graph::TensorUse& u : a.nodes[i]->uses) stack.push_back(a.index.at(u.value.node));
  }

  std::vector<graph::Value> forward_inputs;
  std::vector<std::string> forward_labels;
  std::vector<graph::Value> tangents;
  std::map<ValueKey, size_t> forward_input_index;
  size_t joint_input = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!a.is_input[i]) continue;
    graph::Value v{const_cast<graph::Node*>(a.nodes[i]), 0};
    if (a.kind_of_input[i] == JointInput::Tangent) {
      tangents.push_back(v);
    } else {
      forward_input_index[key(v)] = joint_input;
      forward_inputs.push_back(v);
      forward_labels.push_back(a.nodes[i]->label);
    }
    ++joint_input;
  }
  std::vector<graph::Value> forward_results = forward_outputs;
  forward_results.insert(forward_results.end(), saved_activations.begin(), saved_activations.end());
  p.forward = extract(a, forward_inputs, forward_labels, in_forward, forward_results);

  std::vector<graph::Value> backward_inputs;
  std::vector<std::string> backward_labels;
  size_t activation = 0;
  for (const ValueKey& k : saved_keys) {
    const graph::Value v = saved_values.at(k);
    const size_t i = a.index.at(v.node);
    backward_inputs.push_back(v);
    if (a.is_input[i]) {
      // Position among all joint inputs.
      size_t position = 0;
      for (size_t j = 0; j < i; ++j) position += a.is_input[j] ? 1 : 0;
      p.saved.push_back(Partition::Saved{true, position});
      backward_labels.push_back(a.nodes[i]->label);
    } else {
      p.saved.push_back(Partition::Saved{false, num_forward_outputs + activation++});
      backward_labels.push_back("saved " + a.nodes[i]->name);
      p.saved_bytes += value_bytes(v.meta());
    }
  }
  for (size_t t = 0; t < tangents.size(); ++t) {
    backward_inputs.push_back(tangents[t]);
    backward_labels.push_back(tangents[t].node->label);
  }
  for (size_t i = 0; i < n; ++i) {
    if (in_backward[i] && !a.tangent_dependent[i]) ++p.recomputed_ops;
  }
  p.backward = extract(a, backward_inputs, backward_labels, in_backward, grads);
  return p;
}

int64_t estimate_peak_bytes(const Partition& p) {
  // Walks a graph from `live` bytes, freeing each op output (and each counted input) after its
  // last reader; graph outputs stay. Returns the peak.
  auto walk = [](const graph::Graph& g, int64_t live, const std::vector<bool>& counted_inputs) {
    const auto& nodes = g.nodes();
    std::map<ValueKey, size_t> last_use;
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (const graph::TensorUse& u : nodes[i]->uses) last_use[key(u.value)] = i;
    }
    for (const graph::Value& v : g.outputs()) last_use.erase(key(v));
    std::map<const graph::Node*, bool> counted;
    size_t input = 0;
    for (const auto& n : nodes) {
      if (n->kind == graph::NodeKind::Input) {
        counted[n.get()] = input < counted_inputs.size() && counted_inputs[input];
        ++input;
      } else {
        counted[n.get()] = n->op->kind != ops::OpKind::View;
      }
    }
    int64_t peak = live;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const graph::Node& n = *nodes[i];
      if (n.kind == graph::NodeKind::Input) continue;
      if (counted[&n]) {
        for (const graph::ValueMeta& m : n.outputs) live += value_bytes(m);
      }
      peak = std::max(peak, live);
      for (const graph::TensorUse& u : n.uses) {
        auto it = last_use.find(key(u.value));
        if (it == last_use.end() || it->second != i) continue;
        last_use.erase(it);
        if (counted[u.value.node]) live -= value_bytes(u.value.meta());
      }
    }
    return peak;
  };
  const int64_t forward_peak = walk(p.forward, 0, {});
  // The backward starts with the saved activations and the tangents alive.
  std::vector<bool> counted;
  int64_t live = 0;
  const std::vector<graph::Node*> inputs = p.backward.inputs();
  for (size_t k = 0; k < inputs.size(); ++k) {
    const bool activation_or_tangent = k >= p.saved.size() || !p.saved[k].is_input;
    counted.push_back(activation_or_tangent);
    if (activation_or_tangent) live += value_bytes(inputs[k]->outputs[0]);
  }
  return std::max(forward_peak, walk(p.backward, live, counted));
}

}  // namespace kiln::aot
