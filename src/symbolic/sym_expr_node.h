#pragma once
// The node behind a SymExpr and the one place nodes are made. Only the canonicalizing builders
// (sym_expr_arithmetic.cpp, polynomial.cpp) call make(): they guarantee that a node is already
// in canonical form, which is what lets equality be structural.
#include <kiln/symbolic/sym_expr.h>

#include <cstdint>
#include <vector>

namespace kiln::symbolic {

class SymExpr::Node {
 public:
  Node(Kind k, int64_t v, std::vector<SymExpr> a, std::vector<int64_t> c);
  Kind kind;
  int64_t value;
  std::vector<SymExpr> args;
  std::vector<int64_t> coeffs;
  size_t hash;  // computed once, so that comparing unequal expressions is usually one compare
};

struct SymExprBuilder {
  static SymExpr make(SymExpr::Kind kind, int64_t value, std::vector<SymExpr> args = {},
                      std::vector<int64_t> coeffs = {});
};

}  // namespace kiln::symbolic
