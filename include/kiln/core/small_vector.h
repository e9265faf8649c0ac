#pragma once
// SmallVector<T, N>: a vector of trivially copyable T that keeps up to N elements inline, so
// that a tensor's sizes and strides cost no heap allocation for ordinary ranks.
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <new>
#include <span>
#include <type_traits>

namespace kiln {

template <typename T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() = default;
  explicit SmallVector(size_t n, T value = T()) { assign(n, value); }
  SmallVector(std::initializer_list<T> init) { assign(init.begin(), init.end()); }
  SmallVector(std::span<const T> s) { assign(s.begin(), s.end()); }  // NOLINT: implicit
  template <typename It>
  SmallVector(It first, It last) {
    assign(first, last);
  }
  SmallVector(const SmallVector& o) { assign(o.begin(), o.end()); }
  SmallVector(SmallVector&& o) noexcept { move_from(std::move(o)); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      release();
      move_from(std::move(o));
    }
    return *this;
  }
  ~SmallVector() { release(); }

  template <typename It>
  void assign(It first, It last) {
    size_t n = static_cast<size_t>(std::distance(first, last));
    resize_uninitialized(n);
    std::copy(first, last, data());
  }
  void assign(size_t n, T value) {
    resize_uninitialized(n);
    std::fill_n(data(), n, value);
  }

  T* data() { return heap_ ? heap_.get() : inline_; }
  const T* data() const { return heap_ ? heap_.get() : inline_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }
  T& front() { return data()[0]; }
  const T& front() const { return data()[0]; }

  void push_back(T v) {
    if (size_ == capacity()) grow(std::max<size_t>(2 * capacity(), 1));
    data()[size_++] = v;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  void resize(size_t n, T value = T()) {
    size_t old = size_;
    resize_uninitialized(n);
    if (n > old) std::fill(data() + old, data() + n, value);
  }
  void insert(T* pos, T v) {
    size_t idx = static_cast<size_t>(pos - begin());
    push_back(v);
    std::rotate(begin() + idx, end() - 1, end());
  }
  void erase(T* pos) {
    std::copy(pos + 1, end(), pos);
    --size_;
  }

  operator std::span<const T>() const { return {data(), size_}; }  // NOLINT: implicit
  operator std::span<T>() { return {data(), size_}; }              // NOLINT

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  size_t capacity() const { return heap_ ? heap_capacity_ : N; }
  void grow(size_t cap) {
    auto fresh = std::make_unique_for_overwrite<T[]>(cap);
    std::copy(begin(), end(), fresh.get());
    heap_ = std::move(fresh);
    heap_capacity_ = cap;
  }
  void resize_uninitialized(size_t n) {
    if (n > capacity()) grow(n);
    size_ = n;
  }
  void release() {
    heap_.reset();
    size_ = 0;
  }
  void move_from(SmallVector&& o) {
    if (o.heap_) {
      heap_ = std::move(o.heap_);
      heap_capacity_ = o.heap_capacity_;
      size_ = o.size_;
    } else {
      assign(o.begin(), o.end());
    }
    o.size_ = 0;
  }

  T inline_[N];
  std::unique_ptr<T[]> heap_;
  size_t heap_capacity_ = 0;
  size_t size_ = 0;
};

using DimVector = SmallVector<int64_t, 6>;

}  // namespace kiln
