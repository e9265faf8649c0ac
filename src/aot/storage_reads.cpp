#include "aot/storage_reads.h"

#include <kiln/ops/registry.h>

namespace kiln::aot {

int root_storage_reads(graph::Graph& graph) {
  int changed = 0;
  for (const auto& node : graph.nodes()) {
    if (node->kind != graph::NodeKind::Op || node->op->name() != "as_strided") continue;
    for (graph::TensorUse& use : node->uses) {
      if (use.arg != 0) continue;
      graph::Value root = use.value;
      // A view's output shares its input's storage: its first tensor argument (self).
      while (root.node->kind == graph::NodeKind::Op && root.node->op->kind == ops::OpKind::View &&
             !root.node->uses.empty() && root.node->uses[0].arg == 0) {
        root = root.node->uses[0].value;
      }
      if (!(root == use.value)) {
        use.value = root;
        ++changed;
      }
    }
  }
  return changed;
}

}  // namespace kiln::aot
