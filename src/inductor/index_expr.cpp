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

// Floor division and modulo with Python's signs (what index arithmetic on negative offsets
// needs); loop indices are non-negative, so C's operators match in generated code.
int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

Index constant(int64_t v) { return make(Kind::Const, v); }
Index var(int64_t number) { return make(Kind::Var, number); }

bool is_constant(const Index& e, int64_t* value) {
  if (e->kind != Kind::Const) return false;
  if (value != nullptr) *value = e->value;
  return true;
}

Index operator+(const Index& a, const Index& b) {
  int64_t x = 0, y = 0;
  const bool ca = is_constant(a, &x), cb = is_constant(b, &y);
  if (ca && cb) return constant(x + y);
  if (ca && x == 0) return b;
  if (cb && y == 0) return a;
  // Keep constants on the right, merged: (e + 3) + 4 -> e + 7.
  if (ca) return b + a;
  int64_t z = 0;
  if (cb && a->kind == Kind::Add && is_constant(a->b, &z)) return a->a + constant(z + y);
  return make(Kind::Add, 0, a, b);
}

Index operator*(const Index& a, const Index& b) {
  int64_t x = 0, y = 0;
  const bool ca = is_constant(a, &x), cb = is_constant(b, &y);
  if (ca && cb) return constant(x * y);
  if ((ca && x == 0) || (cb && y == 0)) return constant(0);
  if (ca && x == 1) return b;
  if (cb && y == 1) return a;
  if (ca) return b * a;
  int64_t z = 0;
  if (cb && a->kind == Kind::Mul && is_constant(a->b, &z)) return a->a * constant(z * y);
  return make(Kind::Mul, 0, a, b);
}

Index floordiv(const Index& a, const Index& b) {
  int64_t x = 0, y = 0;
  const bool ca = is_constant(a, &x), cb = is_constant(b, &y);
  if (ca && cb) return constant(floor_div(x, y));
  if (cb && y == 1) return a;
  if (ca && x == 0) return constant(0);
  // (e * c) / c -> e, for a positive c.
  int64_t z = 0;
  if (cb && y > 0 && a->kind == Kind::Mul && is_constant(a->b, &z) && z % y == 0) {
    return a->a * constant(z / y);
  }
  return make(Kind::FloorDiv, 0, a, b);
}

Index mod(const Index& a, const Index& b) {
  int64_t x = 0, y = 0;
  const bool ca = is_constant(a, &x), cb = is_constant(b, &y);
  if (ca && cb) return constant(x - floor_div(x, y) * y);
  if (cb && y == 1) return constant(0);
  int64_t z = 0;
  if (cb && y > 0 && a->kind == Kind::Mul && is_constant(a->b, &z) && z % y == 0) {
    return constant(0);
  }
  return make(Kind::Mod, 0, a, b);
}

bool uses_var(const Index& e, int64_t number) {
  if (e->kind == Kind::Var) return e->value == number;
  if (e->kind == Kind::Const) return false;
  return uses_var(e->a, number) || uses_var(e->b, number);
}

std::optional<int64_t> linear_coefficient(const Index& e, int64_t var) {
  switch (e->kind) {
    case Kind::Const:
      return 0;
    case Kind::Var:
      return e->value == var ? 1 : 0;
    case Kind::Add: {
      const auto a = linear_coefficient(e->a, var), b = linear_coefficient(e->b, var);
      if (!a || !b) return std::nullopt;
      return *a + *b;
    }
    case Kind::Mul: {
      const auto a = linear_coefficient(e->a, var), b = linear_coefficient(e->b, var);
      if (!a || !b) return std::nullopt;
      if (*a == 0 && *b == 0) return 0;
      // Affine only when the other factor is a constant (i * j has no constant coefficient).
      int64_t factor = 0;
      if (*a != 0 && is_constant(e->b, &factor)) return *a * factor;
      if (*b != 0 && is_constant(e->a, &factor)) return *b * factor;
      return std::nullopt;
    }
    case Kind::FloorDiv:
    case Kind::Mod:
      if (uses_var(e, var)) return std::nullopt;
      return 0;
  }
  return std::nullopt;
}

Index substitute(const Index& e, int64_t var, const Index& value) {
  if (!uses_var(e, var)) return e;
  switch (e->kind) {
    case Kind::Const:
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

Index strided_offset(const std::vector<Index>& idx, const std::vector<int64_t>& strides,
                     int64_t offset) {
  Index out = constant(offset);
  for (size_t d = 0; d < idx.size(); ++d) out = out + idx[d] * constant(strides[d]);
  return out;
}

std::vector<Index> unravel(const Index& linear, const std::vector<int64_t>& sizes) {
  std::vector<Index> idx(sizes.size());
  int64_t stride = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    Index i = floordiv(linear, constant(stride));
    // The outermost dimension needs no modulo: the position is in range.
    idx[d] = d == 0 ? i : mod(i, constant(sizes[d]));
    stride *= sizes[d];
  }
  return idx;
}

namespace {

struct Interval {
  int64_t lo = 0, hi = 0;
};

Interval bounds(const Index& e, const std::vector<int64_t>& sizes) {
  switch (e->kind) {
    case Kind::Const:
      return {e->value, e->value};
    case Kind::Var: {
      const auto v = static_cast<size_t>(e->value);
      return {0, v < sizes.size() ? std::max<int64_t>(sizes[v] - 1, 0) : INT64_MAX / 4};
    }
    case Kind::Add: {
      const Interval a = bounds(e->a, sizes), b = bounds(e->b, sizes);
      return {a.lo + b.lo, a.hi + b.hi};
    }
    case Kind::Mul: {
      const Interval a = bounds(e->a, sizes), b = bounds(e->b, sizes);
      const int64_t c[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
      return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
    }
    case Kind::FloorDiv: {
      const Interval a = bounds(e->a, sizes);
      int64_t c = 0;
      if (!is_constant(e->b, &c) || c <= 0) break;
      return {floor_div(a.lo, c), floor_div(a.hi, c)};
    }
    case Kind::Mod: {
      const Interval a = bounds(e->a, sizes);
      int64_t c = 0;
      if (!is_constant(e->b, &c) || c <= 0) break;
      if (a.lo >= 0 && a.hi < c) return a;
      return {0, c - 1};
    }
  }
  return {-(INT64_MAX / 4), INT64_MAX / 4};
}

// e as a sum of terms (term * coefficient; a null term is the constant).
void affine_terms(const Index& e, int64_t scale, std::vector<std::pair<Index, int64_t>>& out) {
  int64_t c = 0;
  if (is_constant(e, &c)) {
    out.emplace_back(nullptr, c * scale);
  } else if (e->kind == Kind::Add) {
    affine_terms(e->a, scale, out);
    affine_terms(e->b, scale, out);
  } else if (e->kind == Kind::Mul && is_constant(e->b, &c)) {
    affine_terms(e->a, scale * c, out);
  } else {
    out.emplace_back(e, scale);
  }
}

Index rebuild(const std::vector<std::pair<Index, int64_t>>& terms, int64_t divide_by) {
  Index out = constant(0);
  for (const auto& [term, coefficient] : terms) {
    const int64_t k = coefficient / divide_by;
    out = out + (term ? term * constant(k) : constant(k));
  }
  return out;
}

// The sum in one canonical form: like terms merged, variables by number, then other terms by
// their text, the constant last (so that equal indices built in different ways compare equal).
Index canonical(const Index& e) {
  std::vector<std::pair<Index, int64_t>> terms;
  affine_terms(e, 1, terms);
  std::vector<std::pair<std::string, std::pair<Index, int64_t>>> keyed;
  int64_t constant_part = 0;
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (int i = 0; i < 64; ++i) v.push_back(fmt::format("v{:02}", i));
    return v;
  }();
  for (const auto& [term, coefficient] : terms) {
    if (!term) {
      constant_part += coefficient;
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
      it->second.second += coefficient;
    }
  }
  std::sort(keyed.begin(), keyed.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  Index out = constant(0);
  for (const auto& [key, t] : keyed) {
    if (t.second != 0) out = out + t.first * constant(t.second);
  }
  return out + constant(constant_part);
}

Index simplify_divisions(const Index& e, const std::vector<int64_t>& sizes);

}  // namespace

Index simplify_in_ranges(const Index& e, const std::vector<int64_t>& sizes) {
  return canonical(simplify_divisions(e, sizes));
}

namespace {

Index simplify_divisions(const Index& e, const std::vector<int64_t>& sizes) {
  switch (e->kind) {
    case Kind::Const:
    case Kind::Var:
      return e;
    case Kind::Add:
      return simplify_divisions(e->a, sizes) + simplify_divisions(e->b, sizes);
    case Kind::Mul:
      return simplify_divisions(e->a, sizes) * simplify_divisions(e->b, sizes);
    case Kind::FloorDiv:
    case Kind::Mod:
      break;
  }
  const Index a = canonical(simplify_divisions(e->a, sizes));
  const Index b = simplify_divisions(e->b, sizes);
  const bool is_mod = e->kind == Kind::Mod;
  int64_t c = 0;
  if (is_constant(b, &c) && c > 0) {
    std::vector<std::pair<Index, int64_t>> terms, multiples, rest;
    affine_terms(a, 1, terms);
    for (const auto& t : terms) (t.second % c == 0 ? multiples : rest).push_back(t);
    const Index remainder = rebuild(rest, 1);
    const Interval r = bounds(remainder, sizes);
    if (r.lo >= 0 && r.hi < c) return is_mod ? remainder : rebuild(multiples, c);
  }
  return is_mod ? mod(a, b) : floordiv(a, b);
}

}  // namespace

}  // namespace kiln::inductor
