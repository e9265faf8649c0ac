#include <kiln/core/symint.h>

namespace kiln {

SymInt SymInt::from_node(const SymNodeImpl* node) {
  auto bits = reinterpret_cast<uintptr_t>(node);
  KILN_INTERNAL_ASSERT(node != nullptr && (bits & kMask) == 0);
  node->incref();
  return adopt_raw(static_cast<int64_t>(bits | kSymTag));
}

void SymInt::throw_symbolic() const {
  KILN_FAIL("expected a concrete size, got the symbolic size {}", node()->str());
}

std::string SymInt::str() const { return is_symbolic() ? node()->str() : std::to_string(data_); }

namespace {
int64_t floordiv_int(int64_t a, int64_t b) {
  KILN_CHECK(b != 0, "SymInt: division by zero");
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
// A symbolic operand on either side: let its node build the expression.
const SymNodeImpl* sym_of(const SymInt& a, const SymInt& b) {
  return a.is_symbolic() ? a.node() : b.node();
}
}  // namespace

SymInt operator+(const SymInt& a, const SymInt& b) {
  if (!a.is_symbolic() && !b.is_symbolic()) return a.data_ + b.data_;
  return a.is_symbolic() ? a.node()->add(b) : b.node()->add(a);
}
SymInt operator-(const SymInt& a, const SymInt& b) {
  if (!a.is_symbolic() && !b.is_symbolic()) return a.data_ - b.data_;
  return a.is_symbolic() ? a.node()->sub(b) : b.node()->neg() + a;
}
SymInt operator*(const SymInt& a, const SymInt& b) {
  if (!a.is_symbolic() && !b.is_symbolic()) return a.data_ * b.data_;
  return a.is_symbolic() ? a.node()->mul(b) : b.node()->mul(a);
}
SymInt operator/(const SymInt& a, const SymInt& b) {
  if (!a.is_symbolic() && !b.is_symbolic()) return floordiv_int(a.data_, b.data_);
  KILN_CHECK(a.is_symbolic(), "SymInt: {} // {} with a symbolic divisor is not supported", a.str(),
             b.str());
  return a.node()->floordiv(b);
}
SymInt operator%(const SymInt& a, const SymInt& b) {
  if (!a.is_symbolic() && !b.is_symbolic())
    return a.data_ - floordiv_int(a.data_, b.data_) * b.data_;
  KILN_CHECK(a.is_symbolic(), "SymInt: {} % {} with a symbolic divisor is not supported", a.str(),
             b.str());
  return a.node()->mod(b);
}
SymInt SymInt::operator-() const { return is_symbolic() ? node()->neg() : SymInt(-data_); }
bool operator==(const SymInt& a, const SymInt& b) {
  if (!a.is_symbolic() && !b.is_symbolic()) return a.data_ == b.data_;
  return sym_of(a, b)->guard_eq(a.is_symbolic() ? b : a);
}
bool operator<(const SymInt& a, const SymInt& b) {
  if (!a.is_symbolic() && !b.is_symbolic()) return a.data_ < b.data_;
  if (a.is_symbolic()) return a.node()->guard_lt(b);
  return b.node()->guard_gt(a);
}

std::ostream& operator<<(std::ostream& os, const SymInt& s) { return os << s.str(); }

}  // namespace kiln
