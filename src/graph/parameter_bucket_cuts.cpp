#include "graph/parameter_bucket_cuts.h"

#include <kiln/core/error.h>

#include <algorithm>
#include <set>
#include <unordered_map>

namespace kiln::graph {

namespace {

size_t bytes_of(const ValueMeta& m) {
  size_t elements = 1;
  for (const SymInt& s : m.sizes) {
    KILN_CHECK(!s.is_symbolic(), "parameter_bucket_cuts: a parameter has symbolic size {}",
               m.str());
    elements *= static_cast<size_t>(s.raw());
  }
  return elements * itemsize(m.dtype);
}

// Whether the op returns a view of argument `arg` ("Tensor(a) self -> Tensor(a)").
bool returns_view_of(const ops::OpDef& op, int arg) {
  const ops::Argument& a = op.schema.arguments.at(static_cast<size_t>(arg));
  if (!a.alias_set || a.is_mutable) return false;
  return std::any_of(op.schema.returns.begin(), op.schema.returns.end(),
                     [&a](const ops::Argument& r) { return r.alias_set == a.alias_set; });
}

}  // namespace

std::vector<size_t> parameter_bucket_cuts(const Graph& graph,
                                          const std::vector<size_t>& size_limits_bytes) {
  KILN_CHECK(!size_limits_bytes.empty(),
             "parameter_bucket_cuts: expected at least one bucket size limit");
  // The trainable parameter each value is (or views), so that a parameter counts at the node
  // that computes with it, not at a view (its transpose) that split_graph keeps with that node.
  std::unordered_map<const Node*, const Node*> parameter_of;
  std::vector<const Node*> ops;
  for (const auto& n : graph.nodes()) {
    if (n->kind == NodeKind::Input) {
      if (n->role == InputRole::Parameter && n->outputs[0].requires_grad)
        parameter_of.emplace(n.get(), n.get());
      continue;
    }
    ops.push_back(n.get());
    for (const TensorUse& u : n->uses) {
      if (!returns_view_of(*n->op, u.arg)) continue;
      if (auto it = parameter_of.find(u.value.node); it != parameter_of.end())
        parameter_of.emplace(n.get(), it->second);
    }
  }
  std::vector<size_t> cuts;
  std::set<const Node*> counted;
  size_t bucket_bytes = 0, limit = 0;
  for (size_t p = ops.size(); p-- > 0;) {
    size_t new_bytes = 0;
    for (const TensorUse& u : ops[p]->uses) {
      auto it = parameter_of.find(u.value.node);
      if (it == parameter_of.end() || !counted.insert(it->second).second) continue;
      new_bytes += bytes_of(it->second->outputs[0]);
    }
    if (new_bytes == 0) continue;
    if (bucket_bytes > 0 && bucket_bytes >= size_limits_bytes[limit]) {
      cuts.push_back(p + 1);
      bucket_bytes = 0;
      limit = std::min(limit + 1, size_limits_bytes.size() - 1);
    }
    bucket_bytes += new_bytes;
  }
  std::reverse(cuts.begin(), cuts.end());
  return cuts;
}

}  // namespace kiln::graph
