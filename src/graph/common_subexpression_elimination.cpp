// Common subexpression elimination: an op node that calls the same op with the same constants on
// the same values as an earlier one is replaced by it. Conservative about mutation:
// - nodes with side effects (mutation, random draws) are never merged;
// - every mutating node empties the table, since what earlier candidates read may have changed;
// - a node whose output may be written later (directly, or through a view or other alias of it)
//   is neither merged nor merged into: after merging, a write to one would reach the other.
#include <kiln/graph/graph.h>

#include "key_writer.h"

#include <unordered_map>
#include <unordered_set>

namespace kiln::graph {

namespace {

struct ValueHash {
  size_t operator()(Value v) const {
    return std::hash<const Node*>()(v.node) * 31 + static_cast<size_t>(v.output);
  }
};
using ValueSet = std::unordered_set<Value, ValueHash>;

bool writes_argument(const Node& node, int arg) {
  const auto& args = node.op->schema.arguments;
  if (arg >= 0 && static_cast<size_t>(arg) < args.size() &&
      args[static_cast<size_t>(arg)].is_mutable)
    return true;
  return node.op->variant == ops::Variant::InPlace && arg == 0;
}

// Only a functional structured op is known to return fresh tensors; any other op (views,
// composites, custom ops, in-place and out= variants) may return an alias of its inputs.
bool may_alias_inputs(const Node& node) {
  return !(node.op->kind == ops::OpKind::Structured &&
           node.op->variant == ops::Variant::Functional);
}

// Values that some node may write: mutable arguments, and, walking backwards, the inputs of any
// possibly aliasing node one of whose outputs is written.
ValueSet written_values(const Graph& graph) {
  ValueSet written;
  const auto& nodes = graph.nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const Node& n = **it;
    if (n.kind != NodeKind::Op) continue;
    bool output_written = false;
    for (int k = 0; k < static_cast<int>(n.outputs.size()); ++k) {
      output_written = output_written || written.count(Value{const_cast<Node*>(&n), k}) > 0;
    }
    bool alias_written = output_written && may_alias_inputs(n);
    for (const TensorUse& u : n.uses) {
      if (alias_written || writes_argument(n, u.arg)) written.insert(u.value);
    }
  }
  return written;
}

std::string expression_key(const Node& n) {
  detail::KeyWriter w;
  w.out() += n.op->full_name() + "(";
  for (const ops::IValue& a : n.args) {
    w.constant(a);
    w.out() += ',';
  }
  w.out() += ")";
  for (const TensorUse& u : n.uses) {
    w.out() += fmt::format("{}.{}={}:{},", u.arg, u.element, static_cast<const void*>(u.value.node),
                           u.value.output);
  }
  w.out() += "->";
  for (const ValueMeta& m : n.outputs) w.meta(m);
  return std::move(w.out());
}

class CommonSubexpressionElimination final : public Pass {
 public:
  std::string_view name() const override { return "common_subexpression_elimination"; }

  bool run(Graph& graph) override {
    ValueSet written = written_values(graph);
    std::vector<Node*> order;
    for (const auto& n : graph.nodes()) order.push_back(n.get());

    bool changed = false;
    std::unordered_map<std::string, Node*> seen;
    for (Node* n : order) {
      if (n->kind != NodeKind::Op) continue;
      if (n->mutates()) {
        seen.clear();
        continue;
      }
      if (n->has_side_effects()) continue;
      bool output_written = false;
      for (int k = 0; k < static_cast<int>(n->outputs.size()); ++k) {
        output_written = output_written || written.count(n->out(k)) > 0;
      }
      if (output_written) continue;
      auto [it, inserted] = seen.emplace(expression_key(*n), n);
      if (inserted) continue;
      Node* original = it->second;
      for (int k = 0; k < static_cast<int>(n->outputs.size()); ++k) {
        graph.replace_all_uses(n->out(k), original->out(k));
      }
      graph.erase(n);
      changed = true;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> common_subexpression_elimination() {
  return std::make_unique<CommonSubexpressionElimination>();
}

}  // namespace kiln::graph
