#pragma once
// Integer intervals for symbolic expressions: what a ShapeEnv knows about each symbol (a size is
// at least 2 once 0 and 1 are specialized; mark_dynamic may bound it), propagated through an
// expression to decide comparisons statically and to simplify floor divisions and moduli whose
// dividend is known to lie in one period ((s0*4 + r) // 4 == s0 when 0 <= r < 4).
#include <kiln/symbolic/sym_expr.h>

#include <cstdint>
#include <limits>
#include <span>
#include <string>

namespace kiln::symbolic {

// [lo, hi], both inclusive; the int64 limits stand for -inf and +inf (arithmetic saturates).
struct SymRange {
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
  int64_t lo = kNegInf;
  int64_t hi = kPosInf;

  bool contains(int64_t v) const { return lo <= v && v <= hi; }
  bool is_single() const { return lo == hi; }
  std::string str() const;  // "[2, inf]"
  friend bool operator==(const SymRange&, const SymRange&) = default;
};

// A sound interval for `e` when symbol i lies in ranges[i] (unlisted symbols are unbounded).
SymRange bounds(const SymExpr& e, std::span<const SymRange> ranges);

// `e` simplified with the symbols' ranges: a symbol with one possible value becomes it, floor
// divisions and moduli whose dividend stays in one period fold, min/max operands that never win
// are dropped.
SymExpr simplify_in_ranges(const SymExpr& e, std::span<const SymRange> ranges);

}  // namespace kiln::symbolic
