#pragma once
// Plain strided loops for the data-movement ops (shape and indexing families): they visit every
// element of a shape with per-operand element offsets, so that any layout (transposed, strided,
// broadcast with stride 0) works without first making inputs contiguous.
#include <kiln/core/parallel.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

namespace kiln::ops::strided {

// A row-major counter over the first `ndim` dims of a shape that carries each operand's element
// offset along: seek() jumps to a flat index, advance() steps to the next one.
template <size_t N>
class Odometer {
 public:
  Odometer(IntList sizes, const std::array<IntList, N>& strides, size_t ndim)
      : sizes_(sizes), strides_(strides), counter_(ndim, 0) {}

  // Positions at flat index i (< the product of the walked sizes, so no size is zero).
  void seek(int64_t i) {
    off_ = {};
    for (size_t d = counter_.size(); d-- > 0;) {
      counter_[d] = i % sizes_[d];
      i /= sizes_[d];
      for (size_t k = 0; k < N; ++k) off_[k] += counter_[d] * strides_[k][d];
    }
  }
  // Steps to the next index; false after the last one (the counter wraps to zero).
  bool advance() {
    for (size_t d = counter_.size(); d-- > 0;) {
      if (++counter_[d] < sizes_[d]) {
        for (size_t k = 0; k < N; ++k) off_[k] += strides_[k][d];
        return true;
      }
      for (size_t k = 0; k < N; ++k) off_[k] -= strides_[k][d] * (sizes_[d] - 1);
      counter_[d] = 0;
    }
    return false;
  }
  const std::array<int64_t, N>& offsets() const { return off_; }

 private:
  IntList sizes_;
  const std::array<IntList, N>& strides_;
  std::vector<int64_t> counter_;
  std::array<int64_t, N> off_{};
};

// Calls fn(offsets) once per element of `sizes` in row-major order, where offsets[k] is the
// element offset of operand k (the dot product of the index with strides[k]).
template <size_t N, typename F>
void for_each(IntList sizes, const std::array<IntList, N>& strides, F&& fn) {
  for (int64_t s : sizes) {
    if (s == 0) return;
  }
  Odometer<N> it(sizes, strides, sizes.size());
  do {
    fn(it.offsets());
  } while (it.advance());
}

// The same for element-wise work whose iterations are independent (each writes its own
// output element): the flat range is split across threads, each chunk starting its own counter.
// An exception in any chunk is rethrown on the caller's thread.
template <size_t N, typename F>
void for_each_parallel(IntList sizes, const std::array<IntList, N>& strides, F&& fn) {
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  if (numel == 0) return;
  parallel_for(0, numel, kGrainSize, [&](int64_t first, int64_t last) {
    Odometer<N> it(sizes, strides, sizes.size());
    it.seek(first);
    for (int64_t i = first; i < last; ++i, it.advance()) fn(it.offsets());
  });
}

// Row-wise versions: fn(offsets, n) once per row of the last dim, with each operand's element
// offset of the row's first element; the caller walks the n elements of a row with the operands'
// last-dim strides (a tight loop the compiler can unroll or vectorize). A 0-dim shape is one
// row of one element. for_each_row visits rows in row-major order on the calling thread;
// for_each_row_parallel splits them across threads (rows must write disjoint elements).
template <size_t N, typename F>
void for_each_row_range(IntList sizes, const std::array<IntList, N>& strides, int64_t first,
                        int64_t last, F& fn) {
  if (first >= last) return;  // an empty range may come from a shape with a zero size
  const int64_t inner = sizes.empty() ? 1 : sizes[sizes.size() - 1];
  Odometer<N> it(sizes, strides, sizes.empty() ? 0 : sizes.size() - 1);
  it.seek(first);
  for (int64_t r = first; r < last; ++r, it.advance()) fn(it.offsets(), inner);
}

inline int64_t row_count(IntList sizes) {
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < sizes.size(); ++d) rows *= sizes[d];
  for (int64_t s : sizes) {
    if (s == 0) return 0;
  }
  return rows;
}

template <size_t N, typename F>
void for_each_row(IntList sizes, const std::array<IntList, N>& strides, F&& fn) {
  for_each_row_range<N>(sizes, strides, 0, row_count(sizes), fn);
}

template <size_t N, typename F>
void for_each_row_parallel(IntList sizes, const std::array<IntList, N>& strides, F&& fn) {
  const int64_t rows = row_count(sizes);
  if (rows == 0) return;
  const int64_t inner = sizes.empty() ? 1 : sizes[sizes.size() - 1];
  parallel_for(
      0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(inner, 1)),
      [&](int64_t first, int64_t last) { for_each_row_range<N>(sizes, strides, first, last, fn); });
}

// `out` itself when it is contiguous with the given dtype, else a contiguous temporary that
// commit() copies back (out= tensors may have any layout and any dtype results cast to).
inline Tensor dense_target(const Tensor& out, DType dtype) {
  if (out.is_contiguous() && out.dtype() == dtype) return out;
  return empty(out.sizes(), TensorOptions(dtype).device(out.device()));
}
inline void commit(const Tensor& out, const Tensor& target) {
  if (!out.is_same(target)) {
    Tensor dst = out;
    dst.copy_(target);
  }
}

// Copies one element of `size` bytes (a typed copy for the common sizes).
inline void copy_element(char* dst, const char* src, size_t size) {
  switch (size) {
    case 1:
      *dst = *src;
      break;
    case 2:
      std::memcpy(dst, src, 2);
      break;
    case 4:
      std::memcpy(dst, src, 4);
      break;
    case 8:
      std::memcpy(dst, src, 8);
      break;
    default:
      std::memcpy(dst, src, size);
  }
}

// Calls f.template operator()<E>() with E the unsigned integer type of `size` bytes (1, 2, 4 or
// 8: every dtype), for loops that only move elements: typed copies instead of memcpy calls.
template <typename F>
void dispatch_by_size(size_t size, F&& f) {
  switch (size) {
    case 1:
      f.template operator()<uint8_t>();
      break;
    case 2:
      f.template operator()<uint16_t>();
      break;
    case 4:
      f.template operator()<uint32_t>();
      break;
    default:
      KILN_INTERNAL_ASSERT(size == 8);
      f.template operator()<uint64_t>();
  }
}

// dst[i0, i1, ...] = src[maps[0][i0], maps[1][i1], ...] for a contiguous dst of any dtype (the
// same dtype as src). `src_strides` has one entry per dst dim (0 for dims src lacks). Serves
// flip, roll, repeat, index_select and embedding: each output dim reads a permuted or repeated
// set of positions along the matching input dim.
void remap_copy(const Tensor& dst, const Tensor& src, IntList src_strides,
                const std::vector<std::vector<int64_t>>& maps);

// An identity map 0..n-1.
std::vector<int64_t> identity_map(int64_t n);

}  // namespace kiln::ops::strided
