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

// Calls fn(offsets) once per element of `sizes` in row-major order, where offsets[k] is the
// element offset of operand k (the dot product of the index with strides[k]).
template <size_t N, typename F>
void for_each(IntList sizes, const std::array<IntList, N>& strides, F&& fn) {
  const auto ndim = static_cast<int64_t>(sizes.size());
  for (int64_t s : sizes) {
    if (s == 0) return;
  }
  std::vector<int64_t> counter(sizes.size(), 0);
  std::array<int64_t, N> off{};
  while (true) {
    fn(off);
    int64_t d = ndim - 1;
    for (; d >= 0; --d) {
      const auto ud = static_cast<size_t>(d);
      if (++counter[ud] < sizes[ud]) {
        for (size_t k = 0; k < N; ++k) off[k] += strides[k][ud];
        break;
      }
      for (size_t k = 0; k < N; ++k) off[k] -= strides[k][ud] * (sizes[ud] - 1);
      counter[ud] = 0;
    }
    if (d < 0) return;
  }
}

// The same for element-wise work whose iterations are independent (each writes its own
// output element): the flat range is split across threads, each chunk starting its own counter.
// An exception in any chunk is rethrown on the caller's thread.
template <size_t N, typename F>
void for_each_parallel(IntList sizes, const std::array<IntList, N>& strides, F&& fn) {
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  if (numel == 0) return;
  const auto ndim = static_cast<int64_t>(sizes.size());
  parallel_for(0, numel, kGrainSize, [&](int64_t first, int64_t last) {
    std::vector<int64_t> counter(sizes.size(), 0);
    std::array<int64_t, N> off{};
    int64_t rest = first;
    for (int64_t d = ndim - 1; d >= 0; --d) {
      const auto ud = static_cast<size_t>(d);
      counter[ud] = rest % sizes[ud];
      rest /= sizes[ud];
      for (size_t k = 0; k < N; ++k) off[k] += counter[ud] * strides[k][ud];
    }
    for (int64_t i = first; i < last; ++i) {
      fn(off);
      for (int64_t d = ndim - 1; d >= 0; --d) {
        const auto ud = static_cast<size_t>(d);
        if (++counter[ud] < sizes[ud]) {
          for (size_t k = 0; k < N; ++k) off[k] += strides[k][ud];
          break;
        }
        for (size_t k = 0; k < N; ++k) off[k] -= strides[k][ud] * (sizes[ud] - 1);
        counter[ud] = 0;
      }
    }
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
  if (first >= last) return;  // also keeps a zero size out of the divisions below
  const auto ndim = static_cast<int64_t>(sizes.size());
  const int64_t inner = ndim == 0 ? 1 : sizes[static_cast<size_t>(ndim - 1)];
  std::vector<int64_t> counter(sizes.size(), 0);
  std::array<int64_t, N> off{};
  int64_t rest = first;
  for (int64_t d = ndim - 2; d >= 0; --d) {
    const auto ud = static_cast<size_t>(d);
    counter[ud] = rest % sizes[ud];
    rest /= sizes[ud];
    for (size_t k = 0; k < N; ++k) off[k] += counter[ud] * strides[k][ud];
  }
  for (int64_t r = first; r < last; ++r) {
    fn(off, inner);
    for (int64_t d = ndim - 2; d >= 0; --d) {
      const auto ud = static_cast<size_t>(d);
      if (++counter[ud] < sizes[ud]) {
        for (size_t k = 0; k < N; ++k) off[k] += strides[k][ud];
        break;
      }
      for (size_t k = 0; k < N; ++k) off[k] -= strides[k][ud] * (sizes[ud] - 1);
      counter[ud] = 0;
    }
  }
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
