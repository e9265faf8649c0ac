// Dead code elimination: removes op nodes whose outputs nobody reads (no op, not the graph's
// outputs) and that have no side effects (mutations, random draws). Walking backwards with use
// counts removes whole dead chains in one sweep; the sweep repeats until nothing changes.
#include <kiln/graph/graph.h>

#include <unordered_map>

namespace kiln::graph {

namespace {

class DeadCodeElimination final : public Pass {
 public:
  std::string_view name() const override { return "dead_code_elimination"; }

  bool run(Graph& graph) override {
    bool changed = false;
    while (sweep(graph)) changed = true;
    return changed;
  }

 private:
  // One backward sweep; returns whether it removed anything.
  static bool sweep(Graph& graph) {
    // Readers per node (all outputs together): a node is dead when it has none.
    std::unordered_map<const Node*, size_t> readers;
    for (const auto& n : graph.nodes()) {
      for (const TensorUse& u : n->uses) ++readers[u.value.node];
    }
    for (const Value& v : graph.outputs()) ++readers[v.node];

    std::vector<Node*> dead;
    const auto& nodes = graph.nodes();
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      Node* n = it->get();
      if (n->kind != NodeKind::Op || n->has_side_effects()) continue;
      auto count = readers.find(n);
      if (count != readers.end() && count->second > 0) continue;
      for (const TensorUse& u : n->uses) --readers[u.value.node];
      dead.push_back(n);
    }
    // Users come before what they read in `dead`, so each erase finds its node unused.
    for (Node* n : dead) graph.erase(n);
    return !dead.empty();
  }
};

}  // namespace

std::unique_ptr<Pass> dead_code_elimination() { return std::make_unique<DeadCodeElimination>(); }

}  // namespace kiln::graph
