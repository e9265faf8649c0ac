#include "inductor/index_expr.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace kiln::inductor {

namespace {

using Kind = IndexNode::Kind;

Index make(Kind k, int64_t v, Index a = nullptr, Index b = nullptr) {
  return std::make_shared<const IndexNode>(k, v, std::move(a), std::move(b));
}

// Whether a size expression is positive by its form alone: a positive constant, a symbol (a
// dynamic size is at least 2), and sums and products of those with positive coefficients.
bool positive_by_form(const Size& e) {
  using K = symbolic::SymExpr::Kind;
  switch (e.kind()) {
    case K::Constant:
      return e.value() > 0;
    case K::Symbol:
      return true;
    case K::Product:
      return std::all_of(e.args().begin(), e.args().end(), positive_by_form);
    case K::Sum:
      return e.value() >= 0 &&
             std::all_of(e.coefficients().begin(), e.coefficients().end(),
                         [](int64_t c) { return c > 0; }) &&
             std::all_of(e.args().begin(), e.args().end(), positive_by_form);
    default:
      return false;
  }
}

// b divides a for every value of the symbols, read from the canonical form of a % b.
bool divides_by_form(const Size& a, const Size& b) {
  return symbolic::mod(a, b).constant_value() == std::optional<int64_t>(0);
}

}  // namespace

Index constant(int64_t v) { return make(Kind::Const, v); }

Index constant(const Size& size) {
  if (const auto v = size.constant_value()) return constant(*v);
  return std::make_shared<const IndexNode>(Kind::Size, 0, nullptr, nullptr, size);
}

Index var(int64_t number) { return make(Kind::Var, number); }

bool is_constant(const Index& e, int64_t* value) {
  if (e->kind != Kind::Const) return false;
  if (value != nullptr) *value = e->value;
  return true;
}

std::optional<Size> invariant(const Index& e) {
  if (e->kind == Kind::Const) return Size(e->value);
  if (e->kind == Kind::Size) return e->size;
  return std::nullopt;
}

Index operator+(const Index& a, const Index& b) {
  const auto x = invariant(a), y = invariant(b);
  if (x && y) return constant(*x + *y);
  int64_t c = 0;
  if (is_constant(a, &c) && c == 0) return b;
  if (is_constant(b, &c) && c == 0) return a;
  // Keep invariants on the right, merged: (e + 3) + 4 -> e + 7.
  if (x) return b + a;
  if (y && a->kind == Kind::Add) {
    if (const auto z = invariant(a->b)) return a->a + constant(*z + *y);
  }
  return make(Kind::Add, 0, a, b);
}

Index operator*(const Index& a, const Index& b) {
  const auto x = invariant(a), y = invariant(b);
  if (x && y) return constant(*x * *y);
  int64_t c = 0;
  if ((is_constant(a, &c) && c == 0) || (is_constant(b, &c) && c == 0)) return constant(0);
  if (is_constant(a, &c) && c == 1) return b;
  if (is_constant(b, &c) && c == 1) return a;
  if (x) return b * a;
  if (y && a->kind == Kind::Mul) {
    if (const auto z = invariant(a->b)) return a->a * constant(*z * *y);
  }
  return make(Kind::Mul, 0, a, b);
}

Index floordiv(const Index& a, const Index& b) {
  const auto x = invariant(a), y = invariant(b);
  if (x && y) return constant(symbolic::floordiv(*x, *y));
  int64_t c = 0;
  if (is_constant(b, &c) && c == 1) return a;
  if (is_constant(a, &c) && c == 0) return constant(0);
  // (e * c) / d -> e * (c / d), for a positive d dividing c.
  if (y && positive_by_form(*y) && a->kind == Kind::Mul) {
    if (const auto z = invariant(a->b); z && divides_by_form(*z, *y)) {
      return a->a * constant(symbolic::floordiv(*z, *y));
    }
  }
  return make(Kind::FloorDiv, 0, a, b);
}

Index mod(const Index& a, const Index& b) {
  const auto x = invariant(a), y = invariant(b);
  if (x && y) return constant(symbolic::mod(*x, *y));
  int64_t c = 0;
  if (is_constant(b, &c) && c == 1) return constant(0);
  if (y && positive_by_form(*y) && a->kind == Kind::Mul) {
    if (const auto z = invariant(a->b); z && divides_by_form(*z, *y)) return constant(0);
  }
  return make(Kind::Mod, 0, a, b);
}

bool uses_var(const Index& e, int64_t number) {
  if (e->kind == Kind::Var) return e->value == number;
  if (e->kind == Kind::Const || e->kind == Kind::Size) return false;
  return uses_var(e->a, number) || uses_var(e->b, number);
}

std::optional<Size> linear_size_coefficient(const Index& e, int64_t var) {
  switch (e->kind) {
    case Kind::Const:
    case Kind::Size:
      return Size(0);
    case Kind::Var:
      return Size(e->value == var ? 1 : 0);
    case Kind::Add: {
      const auto a = linear_size_coefficient(e->a, var), b = linear_size_coefficient(e->b, var);
      if (!a || !b) return std::nullopt;
      return *a + *b;
    }
    case Kind::Mul: {
      const auto a = linear_size_coefficient(e->a, var), b = linear_size_coefficient(e->b, var);
      if (!a || !b) return std::nullopt;
      const bool a0 = a->constant_value() == std::optional<int64_t>(0);
      const bool b0 = b->constant_value() == std::optional<int64_t>(0);
      if (a0 && b0) return Size(0);
      // Affine only when the other factor is invariant (i * j has no invariant coefficient).
      if (!a0) {
        if (const auto factor = invariant(e->b)) return *a * *factor;
      }
      if (!b0) {
        if (const auto factor = invariant(e->a)) return *b * *factor;
      }
      return std::nullopt;
    }
    case Kind::FloorDiv:
    case Kind::Mod:
      if (uses_var(e, var)) return std::nullopt;
      return Size(0);
  }
  return std::nullopt;
}

std::optional<int64_t> linear_coefficient(const Index& e, int64_t var) {
  const auto c = linear_size_coefficient(e, var);
  if (!c) return std::nullopt;
  return c->constant_value();
}

Index rename_vars(const Index& e, const std::vector<Index>& to) {
  switch (e->kind) {
    case Kind::Const:
    case Kind::Size:
      return e;
    case Kind::Var:
      return to.at(static_cast<size_t>(e->value));
    case Kind::Add:
      return rename_vars(e->a, to) + rename_vars(e->b, to);
    case Kind::Mul:
      return rename_vars(e->a, to) * rename_vars(e->b, to);
    case Kind::FloorDiv:
      return floordiv(rename_vars(e->a, to), rename_vars(e->b, to));
    case Kind::Mod:
      return mod(rename_vars(e->a, to), rename_vars(e->b, to));
  }
  return e;
}

Index substitute(const Index& e, int64_t var, const Index& value) {
  if (!uses_var(e, var)) return e;
  switch (e->kind) {
    case Kind::Const:
    case Kind::Size:
      return e;
    case Kind::Var:
      return e->value == var ? value : e;
    case Kind::Add:
      return substitute(e->a, var, value) + substitute(e->b, var, value);
    case Kind::Mul:
      return substitute(e->a, var, value) * substitute(e->b, var, value);
    case Kind::FloorDiv:
      return floordiv(substitute(e->a, var, value), substitute(e->b, var, value));
    case Kind::Mod:
      return mod(substitute(e->a, var, value), substitute(e->b, var, value));
  }
  return e;
}

std::string to_cpp(const Index& e, const std::vector<std::string>& names) {
  switch (e->kind) {
    case Kind::Const:
      return fmt::format("{}L", e->value);
    case Kind::Size:
      return size_cpp(e->size);
    case Kind::Var:
      return names.at(static_cast<size_t>(e->value));
    case Kind::Add:
      return fmt::format("({} + {})", to_cpp(e->a, names), to_cpp(e->b, names));
    case Kind::Mul:
      return fmt::format("({} * {})", to_cpp(e->a, names), to_cpp(e->b, names));
    case Kind::FloorDiv:
      return fmt::format("({} / {})", to_cpp(e->a, names), to_cpp(e->b, names));
    case Kind::Mod:
      return fmt::format("({} % {})", to_cpp(e->a, names), to_cpp(e->b, names));
  }
  return "?";
}

Index strided_offset(const std::vector<Index>& idx, const Sizes& strides, const Size& offset) {
  Index out = constant(offset);
  for (size_t d = 0; d < idx.size(); ++d) out = out + idx[d] * constant(strides[d]);
  return out;
}

std::vector<Index> unravel(const Index& linear, const Sizes& sizes) {
  std::vector<Index> idx(sizes.size());
  Size stride(1);
  for (size_t d = sizes.size(); d-- > 0;) {
    Index i = floordiv(linear, constant(stride));
    // The outermost dimension needs no modulo: the position is in range.
    idx[d] = d == 0 ? i : mod(i, constant(sizes[d]));
    stride = stride * sizes[d];
  }
  return idx;
}

namespace {

// [lo, hi] of an index over the loops' ranges, when known.
struct Interval {
  Size lo, hi;
};

std::optional<Interval> bounds(const Index& e, const Sizes& sizes, const SizeFacts& facts) {
  switch (e->kind) {
    case Kind::Const:
    case Kind::Size:
      return Interval{*invariant(e), *invariant(e)};
    case Kind::Var: {
      const auto v = static_cast<size_t>(e->value);
      if (v >= sizes.size()) return std::nullopt;
      // An empty loop runs no iteration: its bound does not matter.
      return Interval{Size(0), facts.known_le(Size(1), sizes[v]) ? sizes[v] - Size(1) : Size(0)};
    }
    case Kind::Add: {
      const auto a = bounds(e->a, sizes, facts), b = bounds(e->b, sizes, facts);
      if (!a || !b) return std::nullopt;
      return Interval{a->lo + b->lo, a->hi + b->hi};
    }
    case Kind::Mul: {
      const auto a = bounds(e->a, sizes, facts), b = bounds(e->b, sizes, facts);
      if (!a || !b) return std::nullopt;
      const auto alo = a->lo.constant_value(), ahi = a->hi.constant_value(),
                 blo = b->lo.constant_value(), bhi = b->hi.constant_value();
      if (alo && ahi && blo && bhi) {
        const int64_t c[] = {*alo * *blo, *alo * *bhi, *ahi * *blo, *ahi * *bhi};
        return Interval{Size(*std::min_element(c, c + 4)), Size(*std::max_element(c, c + 4))};
      }
      // A non-negative range times a non-negative invariant.
      const auto scaled = [&](const Interval& r, const Index& factor) -> std::optional<Interval> {
        const auto f = invariant(factor);
        if (!f || !facts.known_le(Size(0), *f) || !facts.known_le(Size(0), r.lo)) {
          return std::nullopt;
        }
        return Interval{r.lo * *f, r.hi * *f};
      };
      if (auto r = scaled(*a, e->b)) return r;
      return scaled(*b, e->a);
    }
    case Kind::FloorDiv: {
      const auto a = bounds(e->a, sizes, facts);
      const auto c = invariant(e->b);
      if (!a || !c || !facts.known_lt(Size(0), *c)) return std::nullopt;
      return Interval{symbolic::floordiv(a->lo, *c), symbolic::floordiv(a->hi, *c)};
    }
    case Kind::Mod: {
      const auto a = bounds(e->a, sizes, facts);
      const auto c = invariant(e->b);
      if (!c || !facts.known_lt(Size(0), *c)) return std::nullopt;
      if (a && facts.known_le(Size(0), a->lo) && facts.known_lt(a->hi, *c)) return a;
      return Interval{Size(0), *c - Size(1)};
    }
  }
  return std::nullopt;
}

// e as a sum of terms (term * coefficient; a null term is the invariant part).
void affine_terms(const Index& e, const Size& scale, std::vector<std::pair<Index, Size>>& out) {
  if (const auto c = invariant(e)) {
    out.emplace_back(nullptr, *c * scale);
  } else if (e->kind == Kind::Add) {
    affine_terms(e->a, scale, out);
    affine_terms(e->b, scale, out);
  } else if (const auto f = e->kind == Kind::Mul ? invariant(e->b) : std::nullopt) {
    affine_terms(e->a, scale * *f, out);
  } else {
    out.emplace_back(e, scale);
  }
}

Index rebuild(const std::vector<std::pair<Index, Size>>& terms, const Size& divide_by) {
  Index out = constant(0);
  for (const auto& [term, coefficient] : terms) {
    const Size k = symbolic::floordiv(coefficient, divide_by);
    out = out + (term ? term * constant(k) : constant(k));
  }
  return out;
}

// The sum in one canonical form: like terms merged, variables by number, then other terms by
// their text, the invariant part last (so that equal indices built in different ways compare
// equal).
Index canonical(const Index& e) {
  std::vector<std::pair<Index, Size>> terms;
  affine_terms(e, Size(1), terms);
  std::vector<std::pair<std::string, std::pair<Index, Size>>> keyed;
  Size invariant_part(0);
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (int i = 0; i < 64; ++i) v.push_back(fmt::format("v{:02}", i));
    return v;
  }();
  for (const auto& [term, coefficient] : terms) {
    if (!term) {
      invariant_part = invariant_part + coefficient;
      continue;
    }
    if (term->kind == Kind::Var && term->value >= 64) return e;
    std::string key =
        term->kind == Kind::Var ? fmt::format("0{:06}", term->value) : "1" + to_cpp(term, names);
    auto it =
        std::find_if(keyed.begin(), keyed.end(), [&](const auto& k) { return k.first == key; });
    if (it == keyed.end()) {
      keyed.push_back({std::move(key), {term, coefficient}});
    } else {
      it->second.second = it->second.second + coefficient;
    }
  }
  std::sort(keyed.begin(), keyed.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  Index out = constant(0);
  for (const auto& [key, t] : keyed) {
    if (t.second.constant_value() != std::optional<int64_t>(0)) {
      out = out + t.first * constant(t.second);
    }
  }
  return out + constant(invariant_part);
}

Index simplify_divisions(const Index& e, const Sizes& sizes, const SizeFacts& facts) {
  switch (e->kind) {
    case Kind::Const:
    case Kind::Size:
    case Kind::Var:
      return e;
    case Kind::Add:
      return simplify_divisions(e->a, sizes, facts) + simplify_divisions(e->b, sizes, facts);
    case Kind::Mul:
      return simplify_divisions(e->a, sizes, facts) * simplify_divisions(e->b, sizes, facts);
    case Kind::FloorDiv:
    case Kind::Mod:
      break;
  }
  const Index a = canonical(simplify_divisions(e->a, sizes, facts));
  const Index b = simplify_divisions(e->b, sizes, facts);
  const bool is_mod = e->kind == Kind::Mod;
  const auto c = invariant(b);
  if (c && facts.known_lt(Size(0), *c)) {
    std::vector<std::pair<Index, Size>> terms, multiples, rest;
    affine_terms(a, Size(1), terms);
    for (const auto& t : terms)
      (facts.known_multiple(t.second, *c) ? multiples : rest).push_back(t);
    const Index remainder = rebuild(rest, Size(1));
    const auto r = bounds(remainder, sizes, facts);
    if (r && facts.known_le(Size(0), r->lo) && facts.known_lt(r->hi, *c)) {
      return is_mod ? remainder : rebuild(multiples, *c);
    }
  }
  return is_mod ? mod(a, b) : floordiv(a, b);
}

}  // namespace

Index simplify_in_ranges(const Index& e, const Sizes& sizes, const SizeFacts& facts) {
  return canonical(simplify_divisions(e, sizes, facts));
}

}  // namespace kiln::inductor
