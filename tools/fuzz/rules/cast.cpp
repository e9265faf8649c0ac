// Dtype conversions (_to_copy between float32, int64 and bool, float to int only for values
// clear of integers, where truncation jumps) and clone.
#include "fuzz/rules/rules.h"

#include <kiln/kiln.h>

namespace kiln::fuzz {
namespace {

bool convertible(ProgramBuilder& b, int x, DType to) {
  const Tensor& t = b.value(x);
  if (t.dtype() == to || t.numel() == 0) return t.dtype() != to;
  if (!is_float(t)) return true;
  if (to == DType::Bool) return b.facts(x).min_abs > b.margin(x);
  if (is_integral(to, false)) return b.facts(x).min_to_integer > b.margin(x);
  return true;
}

bool propose_cast(ProgramBuilder& b) {
  const DType to = b.rng().pick(std::vector<DType>{DType::Float32, DType::Float32, DType::Int64,
                                                   DType::Bool, DType::Float64});
  const int x = b.pick([&](int w, const Tensor&) { return convertible(b, w, to); });
  if (x < 0) return false;
  b.add_node(op_node("_to_copy", {v(x), lit(to)}));
  return true;
}

bool propose_copy(ProgramBuilder& b, const char* op) {
  const int x = b.pick([](int, const Tensor&) { return true; });
  if (x < 0) return false;
  b.add_node(op_node(op, {v(x)}));
  return true;
}

}  // namespace

std::vector<Rule> cast_rules() {
  return {
      {"cast/_to_copy", 0.5, propose_cast},
      {"cast/clone", 0.2, [](ProgramBuilder& b) { return propose_copy(b, "clone"); }},
  };
}

}  // namespace kiln::fuzz
