#pragma once
// SymExpr: an immutable integer expression over size symbols (s0, s1, ...), the value behind a
// symbolic SymInt. Expressions are canonicalized as they are built — a sum of products with
// integer coefficients, sorted terms and folded constants; floor division, modulo, min and max
// that do not fold stay as atoms — so that two spellings of one expression compare equal
// (`s0*2 + s0` == `s0*3`). Floor division and modulo follow Python (and sympy's FloorDiv/Mod):
// the quotient rounds toward negative infinity and the remainder takes the divisor's sign.
// Simplifications assume divisors are nonzero, as sympy does; evaluating a zero divisor raises.
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kiln::symbolic {

class SymExpr {
 public:
  // Atoms are Symbol, FloorDiv, Mod, Min and Max; a Product multiplies two or more atoms; a Sum
  // is a constant plus coefficient * monomial terms (a monomial is an atom or a Product).
  enum class Kind : uint8_t { Constant, Symbol, FloorDiv, Mod, Min, Max, Product, Sum };

  SymExpr(int64_t value = 0);  // NOLINT: implicit from an integer, like SymInt
  static SymExpr symbol(int64_t id);

  Kind kind() const;
  bool is_constant() const { return kind() == Kind::Constant; }
  std::optional<int64_t> constant_value() const;
  // Constant: its value; Symbol: its id; Sum: its constant term; otherwise 0.
  int64_t value() const;
  // Product: its factors (sorted); FloorDiv/Mod: {dividend, divisor}; Min/Max: their operands
  // (sorted); Sum: its monomials (sorted), coefficients() holding their coefficients.
  std::span<const SymExpr> args() const;
  std::span<const int64_t> coefficients() const;

  size_t hash() const;
  // Readable and stable: "s0*3 + s1 - 2", "(s0//2)", "(s0 % 4)", "min(s0, s1)".
  std::string str() const;

  friend bool operator==(const SymExpr& a, const SymExpr& b);
  // A total order (the one canonical forms sort by): constants first, then symbols by id, ...
  friend std::strong_ordering operator<=>(const SymExpr& a, const SymExpr& b);

  class Node;

 private:
  explicit SymExpr(std::shared_ptr<const Node> node) : node_(std::move(node)) {}
  friend struct SymExprBuilder;
  std::shared_ptr<const Node> node_;
};

SymExpr operator+(const SymExpr& a, const SymExpr& b);
SymExpr operator-(const SymExpr& a, const SymExpr& b);
SymExpr operator*(const SymExpr& a, const SymExpr& b);
SymExpr operator-(const SymExpr& a);
// Python's a // b and a % b. A constant zero divisor raises kiln::Error.
SymExpr floordiv(const SymExpr& a, const SymExpr& b);
SymExpr mod(const SymExpr& a, const SymExpr& b);
SymExpr min(const SymExpr& a, const SymExpr& b);
SymExpr max(const SymExpr& a, const SymExpr& b);

std::ostream& operator<<(std::ostream& os, const SymExpr& e);

// The value with symbol i bound to values[i]; raises kiln::Error for an unbound symbol, a zero
// divisor or an int64 overflow.
int64_t evaluate(const SymExpr& e, std::span<const int64_t> values);
// The ids of the symbols `e` reads, ascending, each once.
std::vector<int64_t> free_symbols(const SymExpr& e);
// `e` with each symbol for which `replace(id)` has a value replaced by it, re-canonicalized.
SymExpr substitute(const SymExpr& e,
                   const std::function<std::optional<SymExpr>(int64_t id)>& replace);

}  // namespace kiln::symbolic

template <>
struct std::hash<kiln::symbolic::SymExpr> {
  size_t operator()(const kiln::symbolic::SymExpr& e) const { return e.hash(); }
};
