#include "inductor/unread_pool_indices.h"

#include "inductor/graph_rebuild.h"
#include "inductor/loop_ir.h"

#include <algorithm>
#include <vector>

namespace kiln::inductor {

namespace {

bool indices_unread(const graph::Graph& graph, const graph::Node& n) {
  if (n.kind != graph::NodeKind::Op || !is_op(&n, "max_pool2d_with_indices")) return false;
  const graph::Value indices{const_cast<graph::Node*>(&n), 1};
  const std::vector<graph::Value>& returned = graph.outputs();
  return graph.users(indices).empty() &&
         std::find(returned.begin(), returned.end(), indices) == returned.end();
}

}  // namespace

size_t drop_unread_pool_indices(graph::Graph& graph) {
  size_t dropped = 0;
  for (const auto& n : graph.nodes()) dropped += indices_unread(graph, *n) ? 1 : 0;
  if (dropped == 0) return 0;

  GraphRebuild rebuild(graph);
  for (const auto& n : graph.nodes()) {
    if (!indices_unread(graph, *n)) {
      rebuild.copy(*n);
      continue;
    }
    std::vector<EmitArg> args(n->args.begin(), n->args.end());
    const graph::TensorUse& self = n->uses.front();
    args[static_cast<size_t>(self.arg)] = rebuild[self.value];
    graph::Node& values = rebuild.emit("_max_pool2d_values", std::move(args), n->loc);
    rebuild.map(graph::Value{n.get(), 0}, values.out(0));
  }
  graph = std::move(rebuild).finish();
  return dropped;
}

}  // namespace kiln::inductor
