// Graph::structural_key: a cache key equal for two graphs exactly when they run the same ops with
// the same constants on inputs of the same metadata, wired the same way. Names, labels and source
// lines are left out; values are named by node position.
#include <kiln/graph/graph.h>

#include "key_writer.h"

#include <unordered_map>

namespace kiln::graph {

using detail::KeyWriter;

std::string Graph::structural_key() const {
  std::unordered_map<const Node*, size_t> position;
  position.reserve(nodes_.size());
  KeyWriter w;
  auto ref = [&position, &w](Value v) {
    if (!v.defined()) {
      w.out() += "%_";
      return;
    }
    auto it = position.find(v.node);
    KILN_INTERNAL_ASSERT(it != position.end());
    w.out() += fmt::format("%{}.{}", it->second, v.output);
  };
  for (const auto& n : nodes_) {
    position.emplace(n.get(), position.size());
    if (n->kind == NodeKind::Input) {
      w.out() += fmt::format("in{}", static_cast<int>(n->role));
      if (n->number) w.constant(ops::IValue(*n->number));
    } else {
      w.out() += fmt::format("op{}:{}(", n->op->full_name().size(), n->op->full_name());
      // Tensor slots hold undefined tensors in both graphs; the uses say what fills them.
      for (const ops::IValue& a : n->args) {
        w.constant(a);
        w.out() += ',';
      }
      w.out() += ")u(";
      for (const TensorUse& u : n->uses) {
        w.out() += fmt::format("{}.{}=", u.arg, u.element);
        ref(u.value);
        w.out() += ',';
      }
      w.out() += ')';
    }
    w.out() += "->(";
    for (const ValueMeta& m : n->outputs) w.meta(m);
    w.out() += ");";
  }
  w.out() += "return(";
  for (const Value& v : outputs_) {
    ref(v);
    w.out() += ',';
  }
  w.out() += ')';
  return std::move(w.out());
}

}  // namespace kiln::graph
