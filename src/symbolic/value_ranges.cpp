#include <kiln/core/error.h>
#include <kiln/symbolic/value_ranges.h>

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

#include "symbolic/checked_math.h"

namespace kiln::symbolic {

using Kind = SymExpr::Kind;

namespace {

int64_t saturated(bool negative) { return negative ? SymRange::kNegInf : SymRange::kPosInf; }

bool is_infinite(int64_t v) { return v == SymRange::kNegInf || v == SymRange::kPosInf; }

int64_t sat_add(int64_t a, int64_t b) {
  if (is_infinite(a)) return a;  // inf + finite (ranges never add +inf to -inf)
  if (is_infinite(b)) return b;
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return saturated(a < 0);
  return r;
}

int64_t sat_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (is_infinite(a) || is_infinite(b)) return saturated((a < 0) != (b < 0));
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return saturated((a < 0) != (b < 0));
  return r;
}

// Floor division of a range endpoint; infinities stay infinite.
int64_t sat_floor_div(int64_t a, int64_t b) {
  if (is_infinite(a)) return saturated((a < 0) != (b < 0));
  return floor_div(a, b);
}

SymRange add(SymRange a, SymRange b) { return {sat_add(a.lo, b.lo), sat_add(a.hi, b.hi)}; }

SymRange mul(SymRange a, SymRange b) {
  const std::array<int64_t, 4> c = {sat_mul(a.lo, b.lo), sat_mul(a.lo, b.hi), sat_mul(a.hi, b.lo),
                                    sat_mul(a.hi, b.hi)};
  return {*std::min_element(c.begin(), c.end()), *std::max_element(c.begin(), c.end())};
}

SymRange floordiv(SymRange a, SymRange d) {
  // floor(a / d) is monotone in each argument while d keeps one sign: the corners bound it.
  if (d.lo <= 0 && d.hi >= 0) return {};
  const std::array<int64_t, 4> c = {sat_floor_div(a.lo, d.lo), sat_floor_div(a.lo, d.hi),
                                    sat_floor_div(a.hi, d.lo), sat_floor_div(a.hi, d.hi)};
  return {*std::min_element(c.begin(), c.end()), *std::max_element(c.begin(), c.end())};
}

SymRange mod(SymRange a, SymRange d) {
  if (d.is_single() && d.lo > 0 && !is_infinite(a.lo) && !is_infinite(a.hi)) {
    // Within one period the remainder is the dividend shifted.
    const int64_t c = d.lo;
    const int64_t k = floor_div(a.lo, c);
    if (floor_div(a.hi, c) == k) return {a.lo - k * c, a.hi - k * c};
  }
  if (d.lo > 0) {
    int64_t hi = sat_add(d.hi, -1);
    if (a.lo >= 0) hi = std::min(hi, a.hi);  // a % d <= a for a >= 0
    return {0, hi};
  }
  if (d.hi < 0) return {sat_add(d.lo, 1), 0};
  return {};
}

}  // namespace

std::string SymRange::str() const {
  auto end = [](int64_t v) {
    return v == kNegInf ? std::string("-inf") : v == kPosInf ? "inf" : std::to_string(v);
  };
  return fmt::format("[{}, {}]", end(lo), end(hi));
}

SymRange bounds(const SymExpr& e, std::span<const SymRange> ranges) {
  switch (e.kind()) {
    case Kind::Constant:
      return {e.value(), e.value()};
    case Kind::Symbol: {
      const auto id = static_cast<size_t>(e.value());
      return id < ranges.size() ? ranges[id] : SymRange{};
    }
    case Kind::FloorDiv:
      return floordiv(bounds(e.args()[0], ranges), bounds(e.args()[1], ranges));
    case Kind::Mod:
      return mod(bounds(e.args()[0], ranges), bounds(e.args()[1], ranges));
    case Kind::Min:
    case Kind::Max: {
      SymRange out = bounds(e.args()[0], ranges);
      for (const SymExpr& a : e.args().subspan(1)) {
        const SymRange r = bounds(a, ranges);
        if (e.kind() == Kind::Min) {
          out = {std::min(out.lo, r.lo), std::min(out.hi, r.hi)};
        } else {
          out = {std::max(out.lo, r.lo), std::max(out.hi, r.hi)};
        }
      }
      return out;
    }
    case Kind::Product: {
      SymRange out{1, 1};
      for (const SymExpr& a : e.args()) out = mul(out, bounds(a, ranges));
      return out;
    }
    case Kind::Sum: {
      SymRange out{e.value(), e.value()};
      for (size_t i = 0; i < e.args().size(); ++i) {
        const int64_t c = e.coefficients()[i];
        out = add(out, mul(bounds(e.args()[i], ranges), SymRange{c, c}));
      }
      return out;
    }
  }
  KILN_FAIL("SymExpr: invalid kind {}", static_cast<int>(e.kind()));
}

namespace {

// One atom refined with the ranges; its operands are already simplified.
SymExpr refine_atom(const SymExpr& atom, std::span<const SymRange> ranges) {
  switch (atom.kind()) {
    case Kind::FloorDiv: {
      const SymRange r = bounds(atom, ranges);
      if (r.is_single()) return r.lo;
      return atom;
    }
    case Kind::Mod: {
      const SymExpr& divisor = atom.args()[1];
      const SymRange a = bounds(atom.args()[0], ranges);
      if (divisor.is_constant() && divisor.value() > 0 && !is_infinite(a.lo) &&
          !is_infinite(a.hi)) {
        const int64_t c = divisor.value();
        const int64_t k = floor_div(a.lo, c);
        // x % c == x - k*c while x stays in [k*c, k*c + c).
        if (floor_div(a.hi, c) == k) return atom.args()[0] - SymExpr(checked_mul(k, c));
      }
      const SymRange r = bounds(atom, ranges);
      if (r.is_single()) return r.lo;
      return atom;
    }
    case Kind::Min:
    case Kind::Max: {
      const bool is_min = atom.kind() == Kind::Min;
      std::vector<SymExpr> kept;
      std::span<const SymExpr> ops = atom.args();
      for (size_t j = 0; j < ops.size(); ++j) {
        bool loses = false;
        for (size_t i = 0; i < ops.size() && !loses; ++i) {
          if (i == j) continue;
          const SymRange diff = bounds(ops[j] - ops[i], ranges);
          // Ties keep the earlier operand, so two always-equal operands do not both go.
          loses = is_min ? (diff.lo > 0 || (diff.lo == 0 && i < j))
                         : (diff.hi < 0 || (diff.hi == 0 && i < j));
        }
        if (!loses) kept.push_back(ops[j]);
      }
      if (kept.size() == ops.size()) return atom;
      SymExpr out = kept.at(0);
      for (size_t i = 1; i < kept.size(); ++i) out = is_min ? min(out, kept[i]) : max(out, kept[i]);
      return out;
    }
    default:
      return atom;
  }
}

// `e` (a freshly rebuilt expression) with its top-level atoms refined.
SymExpr refine(const SymExpr& e, std::span<const SymRange> ranges) {
  switch (e.kind()) {
    case Kind::Product: {
      SymExpr out = 1;
      for (const SymExpr& a : e.args()) out = out * refine_atom(a, ranges);
      return out;
    }
    case Kind::Sum: {
      SymExpr out = e.value();
      for (size_t i = 0; i < e.args().size(); ++i) {
        out = out + refine(e.args()[i], ranges) * e.coefficients()[i];
      }
      return out;
    }
    default:
      return refine_atom(e, ranges);
  }
}

}  // namespace

SymExpr simplify_in_ranges(const SymExpr& e, std::span<const SymRange> ranges) {
  switch (e.kind()) {
    case Kind::Constant:
      return e;
    case Kind::Symbol: {
      const SymRange r = bounds(e, ranges);
      return r.is_single() ? SymExpr(r.lo) : e;
    }
    case Kind::FloorDiv:
      return refine(floordiv(simplify_in_ranges(e.args()[0], ranges),
                             simplify_in_ranges(e.args()[1], ranges)),
                    ranges);
    case Kind::Mod:
      return refine(
          mod(simplify_in_ranges(e.args()[0], ranges), simplify_in_ranges(e.args()[1], ranges)),
          ranges);
    case Kind::Min:
    case Kind::Max: {
      SymExpr out = simplify_in_ranges(e.args()[0], ranges);
      for (const SymExpr& a : e.args().subspan(1)) {
        SymExpr v = simplify_in_ranges(a, ranges);
        out = e.kind() == Kind::Min ? min(out, v) : max(out, v);
      }
      return refine(out, ranges);
    }
    case Kind::Product: {
      SymExpr out = 1;
      for (const SymExpr& a : e.args()) out = out * simplify_in_ranges(a, ranges);
      return out;
    }
    case Kind::Sum: {
      SymExpr out = e.value();
      for (size_t i = 0; i < e.args().size(); ++i) {
        out = out + simplify_in_ranges(e.args()[i], ranges) * e.coefficients()[i];
      }
      return out;
    }
  }
  KILN_FAIL("SymExpr: invalid kind {}", static_cast<int>(e.kind()));
}

}  // namespace kiln::symbolic
