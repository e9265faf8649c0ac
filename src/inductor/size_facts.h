#pragma once
// Sizes in the loop-level IR are expressions (symbolic::SymExpr) over the symbols of the
// compilation's ShapeEnv: plain integers when the graph is static. SizeFacts answers what the
// inductor may assume about them: comparisons that hold for every size the guards allow (a
// question it cannot decide is answered "not known", never by a new guard, so that the
// inductor's choices cannot make a graph recompile), hints (the example sizes) for heuristics,
// and upper bounds (the ranges guards established, e.g. a sequence no longer than the position
// table).
#include <kiln/symbolic/shape_env.h>
#include <kiln/symbolic/sym_expr.h>

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kiln::inductor {

using Size = symbolic::SymExpr;
using Sizes = std::vector<Size>;

class SizeFacts {
 public:
  explicit SizeFacts(std::shared_ptr<const symbolic::ShapeEnv> env = nullptr)
      : env_(std::move(env)) {}

  // a < b (a <= b, a == b) for every size the environment allows.
  bool known_lt(const Size& a, const Size& b) const;
  bool known_le(const Size& a, const Size& b) const { return known_lt(a, b + Size(1)); }
  bool known_eq(const Size& a, const Size& b) const;
  bool known_ne(const Size& a, const Size& b) const;
  bool known_eq(const Sizes& a, const Sizes& b) const;
  // a is a multiple of b for every allowed size.
  bool known_multiple(const Size& a, const Size& b) const;
  // The value at the example sizes (a constant's own value).
  int64_t hint(const Size& e) const;
  // The largest value the environment allows, when finite.
  std::optional<int64_t> upper_bound(const Size& e) const;
  // `e` in the environment's canonical form (guards' replacements applied, ranges used).
  Size simplify(const Size& e) const;

  const std::shared_ptr<const symbolic::ShapeEnv>& env() const { return env_; }

 private:
  std::shared_ptr<const symbolic::ShapeEnv> env_;
};

// The constant value of a size, if it is one.
inline std::optional<int64_t> constant_size(const Size& e) { return e.constant_value(); }
bool is_static(const Sizes& sizes);
// The plain integers of static sizes (kiln::Error naming `what` for a symbolic one).
std::vector<int64_t> static_ints(const Sizes& sizes, const char* what);
// C++ source computing a size in generated code, symbol k read from the variable `s<k>`.
std::string size_cpp(const Size& e);
// The product of sizes.
Size product(const Sizes& sizes);
// The values of sizes with symbol i bound to values[i].
std::vector<int64_t> evaluate_sizes(const Sizes& sizes, std::span<const int64_t> values);

}  // namespace kiln::inductor

// Sizes print as their expressions in messages and logs ("s0*32").
template <>
struct fmt::formatter<kiln::symbolic::SymExpr> : fmt::formatter<std::string> {
  auto format(const kiln::symbolic::SymExpr& e, fmt::format_context& ctx) const {
    return fmt::formatter<std::string>::format(e.str(), ctx);
  }
};
