#include "inductor/index_expr.h"

#include <fmt/format.h>

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

}  // namespace kiln::inductor
