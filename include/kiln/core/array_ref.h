#pragma once
// ArrayRef<T>: a non-owning view of contiguous T, constructible from a braced list, a vector, a
// SmallVector, a span or a single value — so `x.view({2, -1})` and `x.sum({0, 1})` read as in
// PyTorch's C++ API. The referenced memory must outlive the ArrayRef (a braced list lives to the
// end of the full expression, which covers a function call).
#include <kiln/core/small_vector.h>
#include <kiln/core/symint.h>

#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <span>
#include <vector>

namespace kiln {

template <typename T>
class ArrayRef {
 public:
  using value_type = T;
  constexpr ArrayRef() = default;
  constexpr ArrayRef(const T& one) : data_(&one), size_(1) {}  // NOLINT: implicit
  constexpr ArrayRef(const T* data, size_t size) : data_(data), size_(size) {}
  // The list's array lives to the end of the full expression that holds the braces. (std::data,
  // not init.begin(): g++'s -Winit-list-lifetime fires on the latter, and a pragma around it is
  // lost where the header comes from a precompiled header.)
  constexpr ArrayRef(std::initializer_list<T> init)  // NOLINT
      : data_(std::data(init)), size_(init.size()) {}
  ArrayRef(const std::vector<T>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  template <size_t N>
  ArrayRef(const SmallVector<T, N>& v) : data_(v.data()), size_(v.size()) {}      // NOLINT
  constexpr ArrayRef(std::span<const T> s) : data_(s.data()), size_(s.size()) {}  // NOLINT
  template <size_t N>
  constexpr ArrayRef(const T (&a)[N]) : data_(a), size_(N) {}  // NOLINT

  constexpr const T* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + size_; }
  constexpr const T& operator[](size_t i) const { return data_[i]; }
  constexpr const T& front() const { return data_[0]; }
  constexpr const T& back() const { return data_[size_ - 1]; }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  constexpr operator std::span<const T>() const { return {data_, size_}; }  // NOLINT

  friend bool operator==(ArrayRef a, ArrayRef b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};

using IntList = ArrayRef<int64_t>;
using SymIntList = ArrayRef<SymInt>;
using SymDimVector = std::vector<SymInt>;

inline SymDimVector to_sym(IntList v) { return SymDimVector(v.begin(), v.end()); }
// Concrete values of a SymInt list; raises kiln::Error if any is symbolic.
inline DimVector expect_ints(SymIntList v) {
  DimVector out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = v[i].expect_int();
  return out;
}

}  // namespace kiln
