#include "inductor/conv_widening.h"

#include "inductor/graph_rebuild.h"
#include "inductor/loop_ir.h"

namespace kiln::inductor {

namespace {

// A CPU convolution (or its backward) whose tensor arguments all have one 16-bit float type.
bool widenable(const graph::Node& n) {
  if (n.kind != graph::NodeKind::Op ||
      !(is_op(&n, "convolution") || is_op(&n, "convolution_backward")) || n.uses.empty()) {
    return false;
  }
  const graph::ValueMeta& first = n.uses.front().value.meta();
  if (!is_half_float(first.dtype) || !first.device.is_cpu()) return false;
  for (const graph::TensorUse& u : n.uses) {
    if (u.element >= 0 || u.value.meta().dtype != first.dtype) return false;
  }
  return true;
}

// Whether output `i` of `n` is computed (convolution_backward's output_mask leaves some out).
bool computed(const graph::Node& n, size_t i) {
  if (!is_op(&n, "convolution_backward")) return true;
  return n.args.at(10).to_int_list().at(i) != 0;
}

graph::Value cast(GraphRebuild& rebuild, graph::Value v, DType dtype, graph::SourceLoc loc) {
  return rebuild.emit("_to_copy", {v, ops::IValue(dtype), ops::IValue(false)}, loc).out();
}

}  // namespace

size_t widen_half_float_convolutions(graph::Graph& graph) {
  size_t widened = 0;
  for (const auto& n : graph.nodes()) widened += widenable(*n) ? 1 : 0;
  if (widened == 0) return 0;

  GraphRebuild rebuild(graph);
  for (const auto& n : graph.nodes()) {
    if (!widenable(*n)) {
      rebuild.copy(*n);
      continue;
    }
    const DType dtype = n->uses.front().value.meta().dtype;
    std::vector<EmitArg> args(n->args.begin(), n->args.end());
    for (const graph::TensorUse& u : n->uses) {
      args[static_cast<size_t>(u.arg)] = cast(rebuild, rebuild[u.value], DType::Float32, n->loc);
    }
    graph::Node& wide = rebuild.emit(n->op->name(), std::move(args), n->loc);
    for (size_t i = 0; i < n->outputs.size(); ++i) {
      const graph::Value source{n.get(), static_cast<int>(i)};
      const graph::Value result = wide.out(static_cast<int>(i));
      rebuild.map(source, computed(*n, i) ? cast(rebuild, result, dtype, n->loc) : result);
    }
  }
  graph = std::move(rebuild).finish();
  return widened;
}

}  // namespace kiln::inductor
