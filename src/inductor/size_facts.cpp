#include "inductor/size_facts.h"

#include <kiln/core/error.h>

#include <fmt/format.h>

namespace kiln::inductor {

bool SizeFacts::known_lt(const Size& a, const Size& b) const {
  const auto x = a.constant_value(), y = b.constant_value();
  if (x && y) return *x < *y;
  if (!env_) return false;
  return env_->static_lt(a, b).value_or(false);
}

bool SizeFacts::known_eq(const Size& a, const Size& b) const {
  if (a == b) return true;
  const auto x = a.constant_value(), y = b.constant_value();
  if (x && y) return false;
  if (!env_) return false;
  return env_->static_eq(a, b).value_or(false);
}

bool SizeFacts::known_ne(const Size& a, const Size& b) const {
  const auto x = a.constant_value(), y = b.constant_value();
  if (x && y) return *x != *y;
  if (!env_) return false;
  const auto eq = env_->static_eq(a, b);
  return eq.has_value() && !*eq;
}

bool SizeFacts::known_eq(const Sizes& a, const Sizes& b) const {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!known_eq(a[i], b[i])) return false;
  }
  return true;
}

bool SizeFacts::known_multiple(const Size& a, const Size& b) const {
  const auto y = b.constant_value();
  if (y && *y == 0) return false;
  return known_eq(symbolic::mod(a, b), Size(0));
}

int64_t SizeFacts::hint(const Size& e) const {
  if (const auto v = e.constant_value()) return *v;
  KILN_CHECK(env_ != nullptr, "inductor: the symbolic size {} has no environment for its hint",
             e.str());
  return env_->hint(e);
}

std::optional<int64_t> SizeFacts::upper_bound(const Size& e) const {
  if (const auto v = e.constant_value()) return *v;
  if (!env_) return std::nullopt;
  const symbolic::SymRange r = env_->bounds(e);
  if (r.hi == symbolic::SymRange::kPosInf) return std::nullopt;
  return r.hi;
}

Size SizeFacts::simplify(const Size& e) const {
  if (!env_ || e.is_constant()) return e;
  return env_->simplify(e);
}

bool is_static(const Sizes& sizes) {
  for (const Size& s : sizes) {
    if (!s.is_constant()) return false;
  }
  return true;
}

std::vector<int64_t> static_ints(const Sizes& sizes, const char* what) {
  std::vector<int64_t> out;
  out.reserve(sizes.size());
  for (const Size& s : sizes) {
    const auto v = s.constant_value();
    KILN_CHECK(v.has_value(), "inductor: {} needs concrete sizes, got the symbolic size {}", what,
               s.str());
    out.push_back(*v);
  }
  return out;
}

namespace {

std::string joined_cpp(std::span<const Size> args, const char* separator) {
  std::string s;
  for (size_t i = 0; i < args.size(); ++i) s += (i ? separator : "") + size_cpp(args[i]);
  return s;
}

}  // namespace

std::string size_cpp(const Size& e) {
  using Kind = symbolic::SymExpr::Kind;
  switch (e.kind()) {
    case Kind::Constant:
      // Unsuffixed: a literal takes the type its value needs (long beyond int's range).
      return fmt::format("{}", e.value());
    case Kind::Symbol:
      return fmt::format("s{}", e.value());
    case Kind::FloorDiv:
      // Python's floor division (sizes in guards' ranges are non-negative; offsets may not be).
      return fmt::format("kiln_floordiv({}, {})", size_cpp(e.args()[0]), size_cpp(e.args()[1]));
    case Kind::Mod:
      return fmt::format("kiln_floormod({}, {})", size_cpp(e.args()[0]), size_cpp(e.args()[1]));
    case Kind::Min:
    case Kind::Max: {
      // Folded pairwise: std::min of more than two needs an initializer list.
      const auto args = e.args();
      std::string s = size_cpp(args[0]);
      for (size_t i = 1; i < args.size(); ++i) {
        s = fmt::format("std::{}<int64_t>({}, {})", e.kind() == Kind::Min ? "min" : "max", s,
                        size_cpp(args[i]));
      }
      return s;
    }
    case Kind::Product:
      return "(" + joined_cpp(e.args(), " * ") + ")";
    case Kind::Sum: {
      std::string s = "(";
      const auto terms = e.args();
      const auto coefficients = e.coefficients();
      for (size_t i = 0; i < terms.size(); ++i) {
        const int64_t c = coefficients[i];
        const std::string term = size_cpp(terms[i]);
        if (i > 0) s += " + ";
        s += c == 1 ? term : fmt::format("{} * {}", c, term);
      }
      if (e.value() != 0 || terms.empty()) s += fmt::format(" + {}", e.value());
      return s + ")";
    }
  }
  KILN_FAIL("inductor: a size expression of unknown kind: {}", e.str());
}

Size product(const Sizes& sizes) {
  Size p(1);
  for (const Size& s : sizes) p = p * s;
  return p;
}

std::vector<int64_t> evaluate_sizes(const Sizes& sizes, std::span<const int64_t> values) {
  std::vector<int64_t> out;
  out.reserve(sizes.size());
  for (const Size& s : sizes) {
    const auto v = s.constant_value();
    out.push_back(v ? *v : symbolic::evaluate(s, values));
  }
  return out;
}

}  // namespace kiln::inductor
