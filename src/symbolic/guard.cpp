#include <kiln/core/error.h>
#include <kiln/symbolic/guard.h>

#include "symbolic/checked_math.h"
#include "symbolic/polynomial.h"

namespace kiln::symbolic {

std::string_view relation_name(Relation r) {
  switch (r) {
    case Relation::Eq:
      return "Eq";
    case Relation::Ne:
      return "Ne";
    case Relation::Lt:
      return "Lt";
    case Relation::Le:
      return "Le";
    case Relation::Gt:
      return "Gt";
    case Relation::Ge:
      return "Ge";
  }
  KILN_FAIL("guard: invalid relation {}", static_cast<int>(r));
}

bool holds(Relation r, int64_t difference) {
  switch (r) {
    case Relation::Eq:
      return difference == 0;
    case Relation::Ne:
      return difference != 0;
    case Relation::Lt:
      return difference < 0;
    case Relation::Le:
      return difference <= 0;
    case Relation::Gt:
      return difference > 0;
    case Relation::Ge:
      return difference >= 0;
  }
  KILN_FAIL("guard: invalid relation {}", static_cast<int>(r));
}

namespace {
// a REL b  <=>  b REL' a
Relation mirrored(Relation r) {
  switch (r) {
    case Relation::Lt:
      return Relation::Gt;
    case Relation::Le:
      return Relation::Ge;
    case Relation::Gt:
      return Relation::Lt;
    case Relation::Ge:
      return Relation::Le;
    default:
      return r;
  }
}
}  // namespace

Guard Guard::of_difference(Relation relation, const SymExpr& difference) {
  Polynomial left, right;
  for (const auto& [m, c] : to_polynomial(difference)) {
    if (c > 0) {
      left.emplace(m, c);
    } else {
      right.emplace(m, checked_neg(c));
    }
  }
  SymExpr lhs = from_polynomial(left), rhs = from_polynomial(right);
  if (lhs.is_constant() && !rhs.is_constant()) return {mirrored(relation), rhs, lhs};
  return {relation, lhs, rhs};
}

std::string Guard::str() const {
  return std::string(relation_name(relation)) + "(" + lhs.str() + ", " + rhs.str() + ")";
}

}  // namespace kiln::symbolic
