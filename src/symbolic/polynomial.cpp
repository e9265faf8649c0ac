#include "symbolic/polynomial.h"

#include <algorithm>
#include <iterator>

#include "symbolic/checked_math.h"
#include "symbolic/sym_expr_node.h"

namespace kiln::symbolic {

using Kind = SymExpr::Kind;

bool MonomialLess::operator()(const Monomial& a, const Monomial& b) const {
  return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end()) < 0;
}

namespace {
Monomial monomial_of(const SymExpr& e) {
  if (e.kind() == Kind::Product) return {e.args().begin(), e.args().end()};
  return {e};
}
}  // namespace

Polynomial to_polynomial(const SymExpr& e) {
  Polynomial p;
  if (e.kind() == Kind::Constant) {
    if (e.value() != 0) p[{}] = e.value();
  } else if (e.kind() == Kind::Sum) {
    if (e.value() != 0) p[{}] = e.value();
    for (size_t i = 0; i < e.args().size(); ++i) p[monomial_of(e.args()[i])] = e.coefficients()[i];
  } else {
    p[monomial_of(e)] = 1;
  }
  return p;
}

SymExpr monomial_expr(const Monomial& m) {
  KILN_INTERNAL_ASSERT(!m.empty());
  if (m.size() == 1) return m[0];
  return SymExprBuilder::make(Kind::Product, 0, m);
}

SymExpr from_polynomial(const Polynomial& p) {
  const int64_t constant = constant_term(p);
  std::vector<SymExpr> monomials;
  std::vector<int64_t> coeffs;
  for (const auto& [m, c] : p) {
    if (m.empty()) continue;
    monomials.push_back(monomial_expr(m));
    coeffs.push_back(c);
  }
  if (monomials.empty()) return SymExpr(constant);
  if (monomials.size() == 1 && coeffs[0] == 1 && constant == 0) return monomials[0];
  return SymExprBuilder::make(Kind::Sum, constant, std::move(monomials), std::move(coeffs));
}

int64_t constant_term(const Polynomial& p) {
  auto it = p.find(Monomial{});
  return it == p.end() ? 0 : it->second;
}

void accumulate(Polynomial& p, const Monomial& m, int64_t coeff) {
  if (coeff == 0) return;
  auto [it, inserted] = p.emplace(m, coeff);
  if (inserted) return;
  it->second = checked_add(it->second, coeff);
  if (it->second == 0) p.erase(it);
}

Polynomial add(const Polynomial& a, const Polynomial& b, int64_t scale) {
  Polynomial out = a;
  for (const auto& [m, c] : b) accumulate(out, m, checked_mul(c, scale));
  return out;
}

Polynomial multiply(const Polynomial& a, const Polynomial& b) {
  Polynomial out;
  for (const auto& [ma, ca] : a) {
    for (const auto& [mb, cb] : b) {
      Monomial m;
      m.reserve(ma.size() + mb.size());
      std::merge(ma.begin(), ma.end(), mb.begin(), mb.end(), std::back_inserter(m));
      accumulate(out, m, checked_mul(ca, cb));
    }
  }
  return out;
}

Polynomial scale(const Polynomial& a, int64_t factor) {
  Polynomial out;
  if (factor == 0) return out;
  for (const auto& [m, c] : a) out.emplace(m, checked_mul(c, factor));
  return out;
}

bool divides(const Monomial& part, const Monomial& whole, Monomial* rest) {
  if (!std::includes(whole.begin(), whole.end(), part.begin(), part.end())) return false;
  if (rest != nullptr) {
    rest->clear();
    std::set_difference(whole.begin(), whole.end(), part.begin(), part.end(),
                        std::back_inserter(*rest));
  }
  return true;
}

}  // namespace kiln::symbolic
