// Canonicalizing arithmetic on SymExpr. +, - and * expand into a sum of products; floor
// division and modulo pull out what divides exactly and keep the rest as one atom; min and max
// flatten, fold constants and drop operands that a constant difference proves redundant.
#include <kiln/core/error.h>
#include <kiln/symbolic/sym_expr.h>

#include <algorithm>
#include <numeric>

#include "symbolic/checked_math.h"
#include "symbolic/polynomial.h"
#include "symbolic/sym_expr_node.h"

namespace kiln::symbolic {

using Kind = SymExpr::Kind;

SymExpr operator+(const SymExpr& a, const SymExpr& b) {
  if (a.is_constant() && b.is_constant()) return checked_add(a.value(), b.value());
  return from_polynomial(add(to_polynomial(a), to_polynomial(b)));
}

SymExpr operator-(const SymExpr& a, const SymExpr& b) {
  if (a.is_constant() && b.is_constant()) return checked_add(a.value(), checked_neg(b.value()));
  return from_polynomial(add(to_polynomial(a), to_polynomial(b), -1));
}

SymExpr operator*(const SymExpr& a, const SymExpr& b) {
  if (a.is_constant() && b.is_constant()) return checked_mul(a.value(), b.value());
  return from_polynomial(multiply(to_polynomial(a), to_polynomial(b)));
}

SymExpr operator-(const SymExpr& a) {
  if (a.is_constant()) return checked_neg(a.value());
  return from_polynomial(scale(to_polynomial(a), -1));
}

namespace {

// The divisor as one term coeff * monomial (a constant has the empty monomial), if it is one.
struct Term {
  Monomial monomial;
  int64_t coeff;
};
std::optional<Term> single_term(const Polynomial& p) {
  if (p.size() != 1) return std::nullopt;
  return Term{p.begin()->first, p.begin()->second};
}

// The sign of a divisor's leading term, so that divisors can be normalized to a positive lead.
bool leading_negative(const Polynomial& p) {
  for (const auto& [m, c] : p) {
    if (!m.empty()) return c < 0;
  }
  return constant_term(p) < 0;
}

// gcd of |c| and every coefficient of p (the constant term included).
int64_t content_gcd(const Polynomial& p, int64_t c) {
  int64_t g = c;
  for (const auto& [m, coeff] : p) g = std::gcd(g, coeff);
  return g < 0 ? checked_neg(g) : g;
}

Polynomial divide_exact(const Polynomial& p, int64_t g) {
  Polynomial out;
  for (const auto& [m, c] : p) out.emplace(m, c / g);
  return out;
}

SymExpr floordiv_by_constant(const Polynomial& p, int64_t c) {
  // c > 0. Dividing every coefficient and c by their gcd keeps floor(p / c).
  if (const int64_t g = content_gcd(p, c); g > 1) {
    return floordiv_by_constant(divide_exact(p, g), c / g);
  }
  if (c == 1) return from_polynomial(p);
  // floor((c*q + r) / c) == q + floor(r / c) for integer q: split off the terms c divides and
  // the multiple of c in the constant.
  Polynomial quotient, rest;
  for (const auto& [m, coeff] : p) {
    if (m.empty()) {
      accumulate(quotient, m, floor_div(coeff, c));
      accumulate(rest, m, floor_mod(coeff, c));
    } else if (coeff % c == 0) {
      quotient.emplace(m, coeff / c);
    } else {
      rest.emplace(m, coeff);
    }
  }
  SymExpr q = from_polynomial(quotient);
  // What remains has symbols (else the constant would have divided out): 0 <= r's constant < c.
  bool has_symbols =
      std::any_of(rest.begin(), rest.end(), [](auto& t) { return !t.first.empty(); });
  if (!has_symbols) return q;
  SymExpr r = from_polynomial(rest);
  // (x // c1) // c == x // (c1 * c) for positive divisors.
  if (r.kind() == Kind::FloorDiv && r.args()[1].is_constant() && r.args()[1].value() > 0) {
    return q + floordiv(r.args()[0], checked_mul(r.args()[1].value(), c));
  }
  return q + SymExprBuilder::make(Kind::FloorDiv, 0, {r, SymExpr(c)});
}

SymExpr mod_by_constant(const Polynomial& p, int64_t c) {
  // c > 0. Coefficients only matter modulo c.
  Polynomial reduced;
  for (const auto& [m, coeff] : p) accumulate(reduced, m, floor_mod(coeff, c));
  bool has_symbols =
      std::any_of(reduced.begin(), reduced.end(), [](auto& t) { return !t.first.empty(); });
  if (!has_symbols) return constant_term(reduced);
  // (g*x) % (g*c) == g * (x % c).
  if (const int64_t g = content_gcd(reduced, c); g > 1) {
    return mod_by_constant(divide_exact(reduced, g), c / g) * g;
  }
  SymExpr r = from_polynomial(reduced);
  // (x % c2) % c == x % c when c divides c2.
  if (r.kind() == Kind::Mod && r.args()[1].is_constant() && r.args()[1].value() > 0 &&
      r.args()[1].value() % c == 0) {
    return mod(r.args()[0], c);
  }
  return SymExprBuilder::make(Kind::Mod, 0, {r, SymExpr(c)});
}

// p split into the terms that `divisor` (one term) divides exactly, divided, and the rest.
void split_by_term(const Polynomial& p, const Term& divisor, Polynomial& quotient,
                   Polynomial& rest) {
  Monomial remaining;
  for (const auto& [m, coeff] : p) {
    if (coeff % divisor.coeff == 0 && divides(divisor.monomial, m, &remaining)) {
      accumulate(quotient, remaining, coeff / divisor.coeff);
    } else {
      accumulate(rest, m, coeff);
    }
  }
}

}  // namespace

SymExpr floordiv(const SymExpr& a, const SymExpr& b) {
  KILN_CHECK(!(b.is_constant() && b.value() == 0), "SymExpr: floor division of {} by zero",
             a.str());
  if (a.is_constant() && b.is_constant()) return floor_div(a.value(), b.value());
  const Polynomial divisor = to_polynomial(b);
  if (leading_negative(divisor)) return floordiv(-a, -b);  // a // b == (-a) // (-b)
  const Polynomial dividend = to_polynomial(a);
  if (b.is_constant()) return floordiv_by_constant(dividend, b.value());
  if (a == b) return 1;
  if (std::optional<Term> term = single_term(divisor)) {
    // (m*q + r) // m == q + r // m for a single-term divisor m (assumed nonzero).
    Polynomial quotient, rest;
    split_by_term(dividend, *term, quotient, rest);
    if (rest.empty()) return from_polynomial(quotient);
    return from_polynomial(quotient) +
           SymExprBuilder::make(Kind::FloorDiv, 0, {from_polynomial(rest), b});
  }
  return SymExprBuilder::make(Kind::FloorDiv, 0, {a, b});
}

SymExpr mod(const SymExpr& a, const SymExpr& b) {
  KILN_CHECK(!(b.is_constant() && b.value() == 0), "SymExpr: modulo of {} by zero", a.str());
  if (a.is_constant() && b.is_constant()) return floor_mod(a.value(), b.value());
  const Polynomial divisor = to_polynomial(b);
  if (leading_negative(divisor)) return -mod(-a, -b);  // a % b == -((-a) % (-b))
  const Polynomial dividend = to_polynomial(a);
  if (b.is_constant()) return mod_by_constant(dividend, b.value());
  if (a == b) return 0;
  if (std::optional<Term> term = single_term(divisor)) {
    Polynomial quotient, rest;
    split_by_term(dividend, *term, quotient, rest);
    if (rest.empty()) return 0;
    return SymExprBuilder::make(Kind::Mod, 0, {from_polynomial(rest), b});
  }
  return SymExprBuilder::make(Kind::Mod, 0, {a, b});
}

namespace {

SymExpr min_or_max(Kind kind, const SymExpr& a, const SymExpr& b) {
  const bool is_min = kind == Kind::Min;
  std::vector<SymExpr> operands;
  std::optional<int64_t> constant;
  for (const SymExpr* e : {&a, &b}) {
    std::span<const SymExpr> parts = e->kind() == kind ? e->args() : std::span<const SymExpr>(e, 1);
    for (const SymExpr& part : parts) {
      if (part.is_constant()) {
        const int64_t v = part.value();
        constant = !constant ? v : (is_min ? std::min(*constant, v) : std::max(*constant, v));
      } else {
        operands.push_back(part);
      }
    }
  }
  if (constant) operands.emplace_back(*constant);
  std::sort(operands.begin(), operands.end());
  operands.erase(std::unique(operands.begin(), operands.end()), operands.end());
  // x and x + k differ by a constant: one of them never wins.
  std::vector<bool> dropped(operands.size(), false);
  for (size_t i = 0; i < operands.size(); ++i) {
    for (size_t j = 0; j < operands.size(); ++j) {
      if (i == j || dropped[i] || dropped[j]) continue;
      std::optional<int64_t> diff = (operands[j] - operands[i]).constant_value();
      if (diff && (is_min ? *diff >= 0 : *diff <= 0)) dropped[j] = true;
    }
  }
  std::vector<SymExpr> kept;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!dropped[i]) kept.push_back(operands[i]);
  }
  if (kept.size() == 1) return kept[0];
  return SymExprBuilder::make(kind, 0, std::move(kept));
}

}  // namespace

SymExpr min(const SymExpr& a, const SymExpr& b) { return min_or_max(Kind::Min, a, b); }
SymExpr max(const SymExpr& a, const SymExpr& b) { return min_or_max(Kind::Max, a, b); }

}  // namespace kiln::symbolic
