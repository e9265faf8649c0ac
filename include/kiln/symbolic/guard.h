#pragma once
// A guard: a relation between two size expressions that a trace assumed (because a branch was
// taken on it) and that every later call must satisfy to reuse the compiled code.
#include <kiln/symbolic/sym_expr.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::symbolic {

enum class Relation : uint8_t { Eq, Ne, Lt, Le, Gt, Ge };

std::string_view relation_name(Relation r);  // "Eq", "Lt", ...
// Whether `difference REL 0` holds.
bool holds(Relation r, int64_t difference);

struct Guard {
  Relation relation;
  SymExpr lhs;
  SymExpr rhs;

  // `difference REL 0` written to read well: positive terms on the left, negated negative terms
  // on the right, the constant on whichever side keeps it positive, and symbols on the left
  // ("s0*2 - 64 < 0" reads Lt(s0*2, 64); "5 - s0 < 0" reads Gt(s0, 5)).
  static Guard of_difference(Relation relation, const SymExpr& difference);

  SymExpr difference() const { return lhs - rhs; }
  std::string str() const;  // "Lt(s0*2, 64)", as PyTorch prints sympy relations
  friend bool operator==(const Guard&, const Guard&) = default;
};

}  // namespace kiln::symbolic
