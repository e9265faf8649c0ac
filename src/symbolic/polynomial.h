#pragma once
// The sum-of-products working form of a SymExpr: monomial -> coefficient. A monomial is a sorted
// list of atoms (symbols, floor divisions, ...; repeated for powers); the empty monomial holds the
// constant term. Arithmetic happens here and the result is turned back into a canonical SymExpr.
#include <kiln/symbolic/sym_expr.h>

#include <cstdint>
#include <map>
#include <vector>

namespace kiln::symbolic {

using Monomial = std::vector<SymExpr>;

struct MonomialLess {
  bool operator()(const Monomial& a, const Monomial& b) const;
};

// Invariant: no zero coefficients.
using Polynomial = std::map<Monomial, int64_t, MonomialLess>;

Polynomial to_polynomial(const SymExpr& e);
SymExpr from_polynomial(const Polynomial& p);
// A monomial as an expression: its atom, or a Product of its atoms.
SymExpr monomial_expr(const Monomial& m);

// a + scale * b
Polynomial add(const Polynomial& a, const Polynomial& b, int64_t scale = 1);
Polynomial multiply(const Polynomial& a, const Polynomial& b);
Polynomial scale(const Polynomial& a, int64_t factor);
int64_t constant_term(const Polynomial& p);
// Adds coeff * m to p, dropping the term if it cancels.
void accumulate(Polynomial& p, const Monomial& m, int64_t coeff);
// Whether `part` is a sub-multiset of `whole` (both sorted); `rest` gets whole minus part.
bool divides(const Monomial& part, const Monomial& whole, Monomial* rest);

}  // namespace kiln::symbolic
