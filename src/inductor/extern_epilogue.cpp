#include "inductor/extern_epilogue.h"

#include "inductor/graph_rebuild.h"

#include <kiln/core/error.h>

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace kiln::inductor {

namespace {

bool same_layout(const graph::ValueMeta& a, const graph::ValueMeta& b) {
  return a.sizes == b.sizes && a.strides == b.strides && a.storage_offset == b.storage_offset &&
         a.dtype == b.dtype && a.device == b.device;
}

// Whether `addend` broadcasts to `sizes` (addmm's and baddbmm's rule for self).
bool broadcasts_to(const graph::ValueMeta& addend, const SymDimVector& sizes) {
  if (addend.sizes.size() > sizes.size()) return false;
  const size_t lead = sizes.size() - addend.sizes.size();
  for (size_t d = 0; d < addend.sizes.size(); ++d) {
    if (!(addend.sizes[d] == SymInt(1)) && !(addend.sizes[d] == sizes[lead + d])) return false;
  }
  return true;
}

// Whether the product `v` is read only by `reader` (once) and is no graph output.
bool only_reader(const graph::Graph& g, graph::Value v, const graph::Node& reader) {
  const std::vector<graph::Node*> users = g.users(v);
  if (users.size() != 1 || users[0] != &reader) return false;
  if (std::count_if(reader.uses.begin(), reader.uses.end(),
                    [&](const graph::TensorUse& u) { return u.value == v; }) != 1) {
    return false;
  }
  return std::find(g.outputs().begin(), g.outputs().end(), v) == g.outputs().end();
}

// Whether `addend` holds one value per column of the [m, n] `sizes`: [n] or [1, n].
bool is_per_column(const graph::ValueMeta& addend, const SymDimVector& sizes) {
  const SymDimVector& a = addend.sizes;
  return (a.size() == 1 && a[0] == sizes[1]) ||
         (a.size() == 2 && a[0] == SymInt(1) && a[1] == sizes[1]);
}

struct Epilogue {
  const graph::Node* product = nullptr;
  graph::Value addend;
};

// The fusable epilogue `add` is, if any.
std::optional<Epilogue> match_epilogue(const graph::Graph& g, const graph::Node& add) {
  if (!is_op(&add, "add") || add.uses.size() != 2) return std::nullopt;
  if (add.args.at(2).to_scalar().to<double>() != 1.0) return std::nullopt;
  for (size_t k = 0; k < 2; ++k) {
    const graph::Value product = add.uses[k].value;
    const graph::Value addend = add.uses[1 - k].value;
    const graph::Node* p = op_node(product);
    if (p == nullptr || product.output != 0 || !only_reader(g, product, add)) continue;
    if (!same_layout(add.outputs[0], product.meta())) continue;
    if (addend.meta().dtype != product.meta().dtype) continue;
    const std::string name = p->op->full_name();
    if ((name == "mm" || name == "bmm") && broadcasts_to(addend.meta(), product.meta().sizes)) {
      return Epilogue{p, addend};
    }
    // A linear layer's bias: one value per column.
    if (name == "_mm_packed" && p->args.at(3).is_none() &&
        std::none_of(p->uses.begin(), p->uses.end(),
                     [](const graph::TensorUse& u) { return u.arg == 3; }) &&
        is_per_column(addend.meta(), product.meta().sizes)) {
      return Epilogue{p, addend};
    }
    if (name == "convolution" && p->args.at(2).is_none() &&
        std::none_of(p->uses.begin(), p->uses.end(),
                     [](const graph::TensorUse& u) { return u.arg == 2; }) &&
        is_per_channel(addend.meta(), product.meta().sizes)) {
      return Epilogue{p, addend};
    }
  }
  return std::nullopt;
}

// The op's argument `arg`: its value (from the rebuilt graph) or its constant.
EmitArg argument(const GraphRebuild& rebuild, const graph::Node& n, int arg) {
  for (const graph::TensorUse& u : n.uses) {
    if (u.arg == arg && u.element < 0) return rebuild[u.value];
  }
  return n.args.at(static_cast<size_t>(arg));
}

graph::Value emit_fused(GraphRebuild& rebuild, const graph::Node& add, const Epilogue& e) {
  const graph::Node& p = *e.product;
  const graph::Value addend = rebuild[e.addend];
  const std::string name = p.op->full_name();
  if (name == "mm" || name == "bmm") {
    return rebuild
        .emit(name == "mm" ? "addmm" : "baddbmm",
              {addend, argument(rebuild, p, 0), argument(rebuild, p, 1)}, p.loc)
        .out();
  }
  // convolution's bias (arg 2) is per channel (dim 1), _mm_packed's (arg 3) per column (dim 1).
  const int bias_arg = name == "_mm_packed" ? 3 : 2;
  const SymInt length = p.outputs[0].sizes.at(1);
  const graph::Value bias =
      rebuild.emit("view", {addend, ops::IValue(std::vector<SymInt>{length})}, add.loc).out();
  std::vector<EmitArg> args;
  for (int i = 0; i < static_cast<int>(p.args.size()); ++i) {
    args.push_back(i == bias_arg ? EmitArg(bias) : argument(rebuild, p, i));
  }
  return rebuild.emit(name, std::move(args), p.loc).out();
}

}  // namespace

size_t fuse_extern_epilogues(graph::Graph& graph) {
  std::unordered_map<const graph::Node*, Epilogue> fused_at;  // by the add node
  std::unordered_set<const graph::Node*> fused_products;
  for (const auto& n : graph.nodes()) {
    if (auto e = match_epilogue(graph, *n); e && fused_products.insert(e->product).second) {
      fused_at.emplace(n.get(), *e);
    }
  }
  if (fused_at.empty()) return 0;
  GraphRebuild rebuild(graph);
  for (const auto& n : graph.nodes()) {
    if (fused_products.count(n.get()) != 0) continue;  // emitted with its epilogue
    auto it = fused_at.find(n.get());
    if (it == fused_at.end()) {
      rebuild.copy(*n);
      continue;
    }
    const graph::Value fused = emit_fused(rebuild, *n, it->second);
    // The extern call's layout is the product's, which the add kept.
    KILN_INTERNAL_ASSERT(same_layout(fused.meta(), n->outputs[0]));
    rebuild.map(n->out(), fused);
  }
  graph = std::move(rebuild).finish();
  return fused_at.size();
}

}  // namespace kiln::inductor
