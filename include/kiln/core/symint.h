#pragma once
// SymInt: a size or stride that is either a plain 64-bit integer or a handle to a symbolic
// expression (filled in by the capture and dynamic-shape layers). It is one int64_t wide; the
// plain path is an integer compare and costs nothing else. Handles are encoded in a reserved
// range of negative values that no real size, stride or offset reaches.
#include <kiln/core/error.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

namespace kiln {

class SymInt;

// The symbolic expression behind a SymInt. Implemented by the dynamic-shapes layer; core only
// needs reference counting, printing, and arithmetic that builds new nodes.
class SymNodeImpl {
 public:
  virtual ~SymNodeImpl() = default;
  virtual std::string str() const = 0;
  // A concrete value when one is known (a hint) — used to take branches while tracing.
  virtual std::optional<int64_t> maybe_value() const = 0;
  virtual SymInt add(const SymInt& other) const = 0;
  virtual SymInt sub(const SymInt& other) const = 0;
  virtual SymInt mul(const SymInt& other) const = 0;
  virtual SymInt floordiv(const SymInt& other) const = 0;
  virtual SymInt mod(const SymInt& other) const = 0;
  virtual SymInt neg() const = 0;
  // Comparisons on symbols record a guard and return the answer under the current hint.
  virtual bool guard_eq(const SymInt& other) const = 0;
  virtual bool guard_lt(const SymInt& other) const = 0;
  // this > other, for `plain < symbolic` (negating both sides could push a plain operand into the
  // handles' reserved range: -INT64_MAX is one).
  virtual bool guard_gt(const SymInt& other) const = 0;

  void incref() const { refcount_.fetch_add(1, std::memory_order_relaxed); }
  void decref() const {
    if (refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

 private:
  mutable std::atomic<int64_t> refcount_{0};
};

class SymInt {
 public:
  constexpr SymInt(int64_t v = 0) : data_(v) {}  // NOLINT: implicit from int
  // Wraps a symbolic expression (takes a reference).
  static SymInt from_node(const SymNodeImpl* node);
  SymInt(const SymInt& o) : data_(o.data_) {
    if (o.is_symbolic()) [[unlikely]]
      o.node()->incref();
  }
  SymInt(SymInt&& o) noexcept : data_(o.data_) { o.data_ = 0; }
  SymInt& operator=(const SymInt& o) {
    if (this != &o) {
      SymInt tmp(o);
      std::swap(data_, tmp.data_);
    }
    return *this;
  }
  SymInt& operator=(SymInt&& o) noexcept {
    std::swap(data_, o.data_);
    return *this;
  }
  ~SymInt() {
    if (is_symbolic()) [[unlikely]]
      node()->decref();
  }

  static constexpr bool is_symbolic_raw(int64_t raw) {
    return (static_cast<uint64_t>(raw) & kMask) == kSymTag;
  }
  constexpr bool is_symbolic() const { return is_symbolic_raw(data_); }
  const SymNodeImpl* node() const {
    return reinterpret_cast<const SymNodeImpl*>(static_cast<uintptr_t>(data_) & ~kMask);
  }

  // The plain value; raises kiln::Error for a symbolic size (the caller needed a concrete one).
  int64_t expect_int() const {
    if (is_symbolic()) [[unlikely]]
      throw_symbolic();
    return data_;
  }
  std::optional<int64_t> maybe_int() const {
    if (!is_symbolic()) return data_;
    return node()->maybe_value();
  }
  // The encoded value (plain value or tagged handle), for storage in raw int64 arrays.
  int64_t raw() const { return data_; }
  // Wraps an encoded value, taking a new reference if it is a handle.
  static SymInt from_raw(int64_t raw) {
    SymInt s;
    s.data_ = raw;
    if (s.is_symbolic()) s.node()->incref();
    return s;
  }
  // Wraps an encoded value whose reference the caller already owns.
  static SymInt adopt_raw(int64_t raw) {
    SymInt s;
    s.data_ = raw;
    return s;
  }
  // Gives up ownership of the encoded value (the caller now holds the reference).
  int64_t release() {
    int64_t r = data_;
    data_ = 0;
    return r;
  }

  std::string str() const;

  friend SymInt operator+(const SymInt& a, const SymInt& b);
  friend SymInt operator-(const SymInt& a, const SymInt& b);
  friend SymInt operator*(const SymInt& a, const SymInt& b);
  friend SymInt operator/(const SymInt& a, const SymInt& b);  // floor division
  friend SymInt operator%(const SymInt& a, const SymInt& b);
  SymInt operator-() const;
  friend bool operator==(const SymInt& a, const SymInt& b);
  friend bool operator<(const SymInt& a, const SymInt& b);
  friend bool operator!=(const SymInt& a, const SymInt& b) { return !(a == b); }
  friend bool operator>(const SymInt& a, const SymInt& b) { return b < a; }
  friend bool operator<=(const SymInt& a, const SymInt& b) { return !(b < a); }
  friend bool operator>=(const SymInt& a, const SymInt& b) { return !(a < b); }

 private:
  static constexpr uint64_t kMask = 0xE000000000000000ull;    // top three bits
  static constexpr uint64_t kSymTag = 0x8000000000000000ull;  // 100: a handle
  [[noreturn]] void throw_symbolic() const;
  int64_t data_;
};

static_assert(sizeof(SymInt) == sizeof(int64_t));

std::ostream& operator<<(std::ostream& os, const SymInt& s);

}  // namespace kiln
