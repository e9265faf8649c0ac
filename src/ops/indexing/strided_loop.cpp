#include "ops/indexing/strided_loop.h"

#include <kiln/core/parallel.h>

#include <algorithm>
#include <cstring>
#include <numeric>

namespace kiln::ops::strided {

std::vector<int64_t> identity_map(int64_t n) {
  std::vector<int64_t> m(static_cast<size_t>(n));
  std::iota(m.begin(), m.end(), int64_t{0});
  return m;
}

void remap_copy(const Tensor& dst, const Tensor& src, IntList src_strides,
                const std::vector<std::vector<int64_t>>& maps) {
  if (dst.numel() == 0) return;
  const size_t item = dst.itemsize();
  const auto ndim = static_cast<size_t>(dst.dim());
  char* out = static_cast<char*>(dst.data_ptr());
  const char* in = static_cast<const char*>(src.data_ptr());
  if (ndim == 0) {
    copy_element(out, in, item);
    return;
  }
  // Byte offsets per dim, so the inner loop is a table lookup.
  std::vector<std::vector<int64_t>> offsets(ndim);
  for (size_t d = 0; d < ndim; ++d) {
    offsets[d].resize(maps[d].size());
    for (size_t j = 0; j < maps[d].size(); ++j) {
      offsets[d][j] = maps[d][j] * src_strides[d] * static_cast<int64_t>(item);
    }
  }
  IntList sizes = dst.sizes();
  const int64_t inner = sizes[ndim - 1];
  const std::vector<int64_t>& inner_off = offsets[ndim - 1];
  // An inner dim read in order from consecutive elements (a contiguous source row) is one memcpy.
  bool consecutive = true;
  for (size_t j = 1; consecutive && j < inner_off.size(); ++j) {
    consecutive = inner_off[j] == inner_off[0] + static_cast<int64_t>(j * item);
  }
  const int64_t rows = dst.numel() / inner;
  // Rows are independent: split them across threads, each chunk starting its own counter.
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(inner, 1)),
               [&](int64_t first, int64_t last) {
                 std::vector<int64_t> counter(ndim - 1, 0);
                 int64_t rest = first;
                 for (int64_t d = static_cast<int64_t>(ndim) - 2; d >= 0; --d) {
                   const auto ud = static_cast<size_t>(d);
                   counter[ud] = rest % sizes[ud];
                   rest /= sizes[ud];
                 }
                 char* row_out = out + first * inner * static_cast<int64_t>(item);
                 for (int64_t r = first; r < last; ++r) {
                   int64_t base = 0;
                   for (size_t d = 0; d + 1 < ndim; ++d) {
                     base += offsets[d][static_cast<size_t>(counter[d])];
                   }
                   const char* row_in = in + base;
                   if (consecutive) {
                     std::memcpy(row_out, row_in + inner_off[0], static_cast<size_t>(inner) * item);
                     row_out += inner * static_cast<int64_t>(item);
                   } else {
                     for (int64_t j = 0; j < inner; ++j) {
                       copy_element(row_out, row_in + inner_off[static_cast<size_t>(j)], item);
                       row_out += item;
                     }
                   }
                   for (int64_t d = static_cast<int64_t>(ndim) - 2; d >= 0; --d) {
                     const auto ud = static_cast<size_t>(d);
                     if (++counter[ud] < sizes[ud]) break;
                     counter[ud] = 0;
                   }
                 }
               });
}

}  // namespace kiln::ops::strided
