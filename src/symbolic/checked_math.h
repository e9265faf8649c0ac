#pragma once
// int64 arithmetic for symbolic expressions: overflow raises kiln::Error instead of wrapping
// (a wrapped size would silently compare equal to a wrong one), and division follows Python.
#include <kiln/core/error.h>

#include <cstdint>
#include <limits>

namespace kiln::symbolic {

inline int64_t checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  KILN_CHECK(!__builtin_add_overflow(a, b, &r), "SymExpr: int64 overflow computing {} + {}", a, b);
  return r;
}

inline int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  KILN_CHECK(!__builtin_mul_overflow(a, b, &r), "SymExpr: int64 overflow computing {} * {}", a, b);
  return r;
}

inline int64_t checked_neg(int64_t a) {
  KILN_CHECK(a != std::numeric_limits<int64_t>::min(), "SymExpr: int64 overflow negating {}", a);
  return -a;
}

// Python's a // b: the quotient rounded toward negative infinity.
inline int64_t floor_div(int64_t a, int64_t b) {
  KILN_CHECK(b != 0, "SymExpr: floor division of {} by zero", a);
  KILN_CHECK(!(a == std::numeric_limits<int64_t>::min() && b == -1),
             "SymExpr: int64 overflow computing {} // -1", a);
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Python's a % b: the remainder has the divisor's sign.
inline int64_t floor_mod(int64_t a, int64_t b) {
  KILN_CHECK(b != 0, "SymExpr: modulo of {} by zero", a);
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

}  // namespace kiln::symbolic
