// Ops that combine values: cat along a dim (the other parts earlier values of matching sizes or
// new inputs, empty parts included), where (a bool condition that broadcasts), clamp (bounds
// kept clear of the values, where its gradient jumps).
#include "fuzz/rules/rules.h"

#include <kiln/kiln.h>

namespace kiln::fuzz {
namespace {

bool propose_cat(ProgramBuilder& b) {
  const int x = b.pick([](int, const Tensor& t) { return t.dim() >= 1; });
  if (x < 0) return false;
  const Tensor& t = b.value(x);
  const int64_t rank = t.dim();
  const int64_t dim = b.rng().uniform(-rank, rank - 1);
  const int64_t d = dim < 0 ? dim + rank : dim;
  std::vector<int> parts = {x};
  for (int64_t i = b.rng().uniform(1, 3); i > 0; --i) {
    const int w = b.pick([&](int, const Tensor& u) {
      if (u.dtype() != t.dtype() || u.dim() != rank) return false;
      for (int64_t k = 0; k < rank; ++k) {
        if (k != d && u.size(k) != t.size(k)) return false;
      }
      return true;
    });
    if (w >= 0 && b.rng().chance(0.5)) {
      parts.push_back(w);
    } else {
      std::vector<int64_t> sizes = t.sizes().vec();
      sizes[static_cast<size_t>(d)] = b.rng().chance(0.15) ? 0 : b.rng().uniform(1, 4);
      parts.push_back(b.add_input(sizes, t.dtype()));
    }
  }
  b.add_node(op_node("cat", {Arg::list(parts), lit(dim)}));
  return true;
}

bool propose_where(ProgramBuilder& b) {
  const int x = b.pick([](int, const Tensor& t) { return is_float(t) || is_int(t); });
  if (x < 0) return false;
  const Tensor& t = b.value(x);
  int cond = b.pick(
      [&](int, const Tensor& c) { return is_bool(c) && broadcastable(c.sizes(), t.sizes()); });
  if (cond < 0) cond = b.add_input(t.sizes().vec(), DType::Bool);
  int y = b.pick([&](int, const Tensor& u) {
    return u.dtype() == t.dtype() && broadcastable(u.sizes(), t.sizes()) &&
           broadcastable(u.sizes(), b.value(cond).sizes());
  });
  if (y < 0) y = b.add_input(t.sizes().vec(), t.dtype());
  b.add_node(op_node("where", {v(cond), v(x), v(y)}));
  return true;
}

bool propose_clamp(ProgramBuilder& b) {
  const int x = b.pick([](int, const Tensor& t) { return is_float(t); });
  if (x < 0) return false;
  const Tensor& t = b.value(x);
  // Bounds at least a margin away from every element: where no element sits at a bound, the
  // gradient is 0 or 1 unambiguously.
  const double lo = std::round(b.rng().real(-2, 0) * 8) / 8, hi = lo + 1 + b.rng().uniform(0, 2);
  if (t.numel() > 0) {
    const Tensor x64 = t.to(DType::Float64);
    const double m = b.margin(x);
    if (kiln::abs(x64 - lo).min().item().to<double>() <= m) return false;
    if (kiln::abs(x64 - hi).min().item().to<double>() <= m) return false;
  }
  b.add_node(op_node("clamp", {v(x), lit(lo), lit(hi)}));
  return true;
}

}  // namespace

std::vector<Rule> combine_rules() {
  return {
      {"combine/cat", 0.6, propose_cat},
      {"combine/where", 0.5, propose_where},
      {"combine/clamp", 0.4, propose_clamp},
  };
}

}  // namespace kiln::fuzz
