#include "aot/recompute_policy.h"

#include "graph/meta_twins.h"

#include <kiln/core/error.h>
#include <kiln/decomp/prims.h>

#include <mutex>
#include <string>
#include <unordered_map>

namespace kiln::aot {

namespace {

bool cheap_class(decomp::PrimClass c) {
  using enum decomp::PrimClass;
  return c == Elementwise || c == Conversion || c == View || c == Creation;
}

// Runs the node's op as prims on meta tensors and checks every prim it reaches is cheap.
bool pointwise_down_to_prims(const graph::Node& node) {
  for (const graph::TensorUse& u : node.uses) {
    for (const SymInt& s : u.value.meta().sizes) {
      if (s.is_symbolic()) return false;
    }
  }
  ops::Stack args =
      node.bind([](graph::Value v) { return graph::tensor_of_meta(v.meta(), kMeta); });
  for (size_t i = 0; i < args.size() && i < node.op->schema.arguments.size(); ++i) {
    if (node.op->schema.arguments[i].type == ops::ArgType::Device) args[i] = ops::IValue(kMeta);
  }
  bool cheap = true;
  try {
    decomp::call_as_prims(*node.op, std::move(args), [&](const ops::OpDef& prim) {
      if (prim.is_random || !cheap_class(*decomp::prim_class(prim))) cheap = false;
    });
  } catch (const Error&) {
    return false;
  }
  return cheap;
}

}  // namespace

bool is_recomputable(const graph::Node& node) {
  if (node.kind != graph::NodeKind::Op) return false;
  const ops::OpDef& op = *node.op;
  if (op.is_random || node.has_side_effects()) return false;
  if (op.kind == ops::OpKind::View) return true;
  if (auto c = decomp::prim_class(op)) return cheap_class(*c);
  if (!decomp::is_decomposable(op)) return false;
  // Pointwise-ness is a property of the op: decided once per op, on the first node met.
  static std::mutex mutex;
  static std::unordered_map<std::string, bool> decided;
  const std::string key = op.full_name();
  {
    std::lock_guard lock(mutex);
    if (auto it = decided.find(key); it != decided.end()) return it->second;
  }
  const bool cheap = pointwise_down_to_prims(node);
  std::lock_guard lock(mutex);
  decided.emplace(key, cheap);
  return cheap;
}

}  // namespace kiln::aot
