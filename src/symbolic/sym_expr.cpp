// SymExpr's node, order, hash, printing and evaluation; the canonicalizing arithmetic lives in
// sym_expr_arithmetic.cpp.
#include <kiln/core/error.h>
#include <kiln/symbolic/sym_expr.h>

#include <algorithm>
#include <functional>
#include <ostream>

#include "symbolic/checked_math.h"
#include "symbolic/sym_expr_node.h"

namespace kiln::symbolic {

namespace {

size_t mix(size_t seed, size_t v) {
  return seed ^ (v + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2));
}

}  // namespace

SymExpr::Node::Node(Kind k, int64_t v, std::vector<SymExpr> a, std::vector<int64_t> c)
    : kind(k), value(v), args(std::move(a)), coeffs(std::move(c)) {
  size_t h = mix(static_cast<size_t>(kind), std::hash<int64_t>{}(value));
  for (const SymExpr& e : args) h = mix(h, e.hash());
  for (int64_t x : coeffs) h = mix(h, std::hash<int64_t>{}(x));
  hash = h;
}

SymExpr SymExprBuilder::make(SymExpr::Kind kind, int64_t value, std::vector<SymExpr> args,
                             std::vector<int64_t> coeffs) {
  return SymExpr(
      std::make_shared<const SymExpr::Node>(kind, value, std::move(args), std::move(coeffs)));
}

SymExpr::SymExpr(int64_t value)
    : node_(std::make_shared<const Node>(Kind::Constant, value, std::vector<SymExpr>{},
                                         std::vector<int64_t>{})) {}

SymExpr SymExpr::symbol(int64_t id) {
  KILN_CHECK(id >= 0, "SymExpr::symbol: expected a non-negative symbol id, got {}", id);
  return SymExprBuilder::make(Kind::Symbol, id);
}

SymExpr::Kind SymExpr::kind() const { return node_->kind; }
int64_t SymExpr::value() const { return node_->value; }
std::optional<int64_t> SymExpr::constant_value() const {
  if (is_constant()) return node_->value;
  return std::nullopt;
}
std::span<const SymExpr> SymExpr::args() const { return node_->args; }
std::span<const int64_t> SymExpr::coefficients() const { return node_->coeffs; }
size_t SymExpr::hash() const { return node_->hash; }

bool operator==(const SymExpr& a, const SymExpr& b) {
  if (a.node_ == b.node_) return true;
  if (a.node_->hash != b.node_->hash) return false;
  return (a <=> b) == 0;
}

std::strong_ordering operator<=>(const SymExpr& a, const SymExpr& b) {
  if (a.node_ == b.node_) return std::strong_ordering::equal;
  const SymExpr::Node& x = *a.node_;
  const SymExpr::Node& y = *b.node_;
  if (auto c = x.kind <=> y.kind; c != 0) return c;
  if (auto c = x.value <=> y.value; c != 0) return c;
  if (auto c = std::lexicographical_compare_three_way(x.args.begin(), x.args.end(), y.args.begin(),
                                                      y.args.end());
      c != 0) {
    return c;
  }
  return std::lexicographical_compare_three_way(x.coeffs.begin(), x.coeffs.end(), y.coeffs.begin(),
                                                y.coeffs.end());
}

namespace {

// An operand of // or %: a sum gets parentheses so the printed text parses back the same way.
std::string operand(const SymExpr& e) {
  return e.kind() == SymExpr::Kind::Sum ? "(" + e.str() + ")" : e.str();
}

std::string joined(std::span<const SymExpr> args, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) out += separator;
    out += args[i].str();
  }
  return out;
}

std::string sum_str(const SymExpr& e) {
  std::string out;
  auto append = [&](int64_t coeff, const std::string& body) {
    if (out.empty()) {
      out = coeff < 0 ? "-" : "";
    } else {
      out += coeff < 0 ? " - " : " + ";
    }
    out += body;
  };
  for (size_t i = 0; i < e.args().size(); ++i) {
    const int64_t c = e.coefficients()[i];
    // The magnitude as unsigned, so that INT64_MIN prints too.
    const uint64_t magnitude = c < 0 ? 0 - static_cast<uint64_t>(c) : static_cast<uint64_t>(c);
    std::string body = e.args()[i].str();
    if (magnitude != 1) body += "*" + std::to_string(magnitude);
    append(c, body);
  }
  if (const int64_t k = e.value(); k != 0) {
    append(k, std::to_string(k < 0 ? 0 - static_cast<uint64_t>(k) : static_cast<uint64_t>(k)));
  }
  return out;
}

}  // namespace

std::string SymExpr::str() const {
  switch (kind()) {
    case Kind::Constant:
      return std::to_string(value());
    case Kind::Symbol:
      return "s" + std::to_string(value());
    case Kind::FloorDiv:
      return "(" + operand(args()[0]) + "//" + operand(args()[1]) + ")";
    case Kind::Mod:
      return "(" + operand(args()[0]) + " % " + operand(args()[1]) + ")";
    case Kind::Min:
      return "min(" + joined(args(), ", ") + ")";
    case Kind::Max:
      return "max(" + joined(args(), ", ") + ")";
    case Kind::Product:
      return joined(args(), "*");
    case Kind::Sum:
      return sum_str(*this);
  }
  KILN_FAIL("SymExpr: invalid kind {}", static_cast<int>(kind()));
}

std::ostream& operator<<(std::ostream& os, const SymExpr& e) { return os << e.str(); }

int64_t evaluate(const SymExpr& e, std::span<const int64_t> values) {
  using Kind = SymExpr::Kind;
  switch (e.kind()) {
    case Kind::Constant:
      return e.value();
    case Kind::Symbol:
      KILN_CHECK(static_cast<size_t>(e.value()) < values.size(),
                 "SymExpr: evaluating s{} with only {} symbol values bound", e.value(),
                 values.size());
      return values[static_cast<size_t>(e.value())];
    case Kind::FloorDiv:
    case Kind::Mod: {
      const int64_t a = evaluate(e.args()[0], values);
      const int64_t b = evaluate(e.args()[1], values);
      KILN_CHECK(b != 0, "SymExpr: evaluating {}: the divisor {} is zero", e.str(),
                 e.args()[1].str());
      return e.kind() == Kind::FloorDiv ? floor_div(a, b) : floor_mod(a, b);
    }
    case Kind::Min:
    case Kind::Max: {
      int64_t out = evaluate(e.args()[0], values);
      for (const SymExpr& a : e.args().subspan(1)) {
        const int64_t v = evaluate(a, values);
        out = e.kind() == Kind::Min ? std::min(out, v) : std::max(out, v);
      }
      return out;
    }
    case Kind::Product: {
      int64_t out = 1;
      for (const SymExpr& a : e.args()) out = checked_mul(out, evaluate(a, values));
      return out;
    }
    case Kind::Sum: {
      int64_t out = e.value();
      for (size_t i = 0; i < e.args().size(); ++i) {
        out = checked_add(out, checked_mul(e.coefficients()[i], evaluate(e.args()[i], values)));
      }
      return out;
    }
  }
  KILN_FAIL("SymExpr: invalid kind {}", static_cast<int>(e.kind()));
}

namespace {
void collect_symbols(const SymExpr& e, std::vector<int64_t>& out) {
  if (e.kind() == SymExpr::Kind::Symbol) out.push_back(e.value());
  for (const SymExpr& a : e.args()) collect_symbols(a, out);
}
}  // namespace

std::vector<int64_t> free_symbols(const SymExpr& e) {
  std::vector<int64_t> out;
  collect_symbols(e, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

SymExpr substitute(const SymExpr& e,
                   const std::function<std::optional<SymExpr>(int64_t id)>& replace) {
  using Kind = SymExpr::Kind;
  switch (e.kind()) {
    case Kind::Constant:
      return e;
    case Kind::Symbol:
      return replace(e.value()).value_or(e);
    case Kind::FloorDiv:
      return floordiv(substitute(e.args()[0], replace), substitute(e.args()[1], replace));
    case Kind::Mod:
      return mod(substitute(e.args()[0], replace), substitute(e.args()[1], replace));
    case Kind::Min:
    case Kind::Max: {
      SymExpr out = substitute(e.args()[0], replace);
      for (const SymExpr& a : e.args().subspan(1)) {
        SymExpr v = substitute(a, replace);
        out = e.kind() == Kind::Min ? min(out, v) : max(out, v);
      }
      return out;
    }
    case Kind::Product: {
      SymExpr out = 1;
      for (const SymExpr& a : e.args()) out = out * substitute(a, replace);
      return out;
    }
    case Kind::Sum: {
      SymExpr out = e.value();
      for (size_t i = 0; i < e.args().size(); ++i) {
        out = out + substitute(e.args()[i], replace) * e.coefficients()[i];
      }
      return out;
    }
  }
  KILN_FAIL("SymExpr: invalid kind {}", static_cast<int>(e.kind()));
}

}  // namespace kiln::symbolic
