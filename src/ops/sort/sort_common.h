#pragma once
// Shared pieces of the sorting ops: the key type elements are compared as, NaN-aware orders
// (NaN is the largest value, as in PyTorch), and a walk over the rows of a tensor along one dim.
#include <kiln/core/tensor.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/indexing.h>

#include <cmath>
#include <type_traits>
#include <vector>

namespace kiln::ops::sorting {

// The length and stride of `dim`; a 0-dim tensor is one row of one element.
inline int64_t dim_size(const Tensor& t, int64_t dim) { return t.dim() == 0 ? 1 : t.size(dim); }
inline int64_t dim_stride(const Tensor& t, int64_t dim) { return t.dim() == 0 ? 0 : t.stride(dim); }

// 16-bit floats compare as float.
template <typename T>
using key_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

template <typename K>
bool is_nan(K v) {
  if constexpr (std::is_floating_point_v<K>) {
    return std::isnan(v);
  } else {
    (void)v;
    return false;
  }
}

// a before b in ascending order: NaN last.
template <typename K>
bool ascending(K a, K b) {
  return a < b || (!is_nan(a) && is_nan(b));
}
// a before b in descending order: NaN first.
template <typename K>
bool descending(K a, K b) {
  return a > b || (is_nan(a) && !is_nan(b));
}

// The rows of a tensor along `dim`: every index of the other dims, in row-major order. Gives
// each operand's element offset of a row's first element (operands share sizes, not strides).
class RowWalker {
 public:
  // A 0-dim tensor is one row of one element.
  RowWalker(IntList sizes, int64_t dim, std::vector<IntList> strides) {
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (static_cast<int64_t>(d) == dim) continue;
      outer_sizes_.push_back(sizes[d]);
      rows_ *= sizes[d];
    }
    for (IntList s : strides) {
      std::vector<int64_t> o;
      for (size_t d = 0; d < s.size(); ++d) {
        if (static_cast<int64_t>(d) != dim) o.push_back(s[d]);
      }
      outer_strides_.push_back(std::move(o));
    }
  }
  int64_t rows() const { return rows_; }
  int64_t offset(size_t operand, int64_t row) const {
    const std::vector<int64_t>& st = outer_strides_[operand];
    int64_t off = 0;
    for (size_t d = outer_sizes_.size(); d-- > 0;) {
      off += (row % outer_sizes_[d]) * st[d];
      row /= outer_sizes_[d];
    }
    return off;
  }

 private:
  std::vector<int64_t> outer_sizes_;
  std::vector<std::vector<int64_t>> outer_strides_;
  int64_t rows_ = 1;
};

// The gradient of values selected along dim (sort, topk): g scattered back to the positions
// `indices` took them from, zero elsewhere (PyTorch's value_selecting_reduction_backward).
inline Tensor scatter_back(const Tensor& self, int64_t dim, const Tensor& indices,
                           const Tensor& g) {
  if (self.dim() == 0) return g;
  return zeros(self.sizes(), g.options()).scatter(dim, indices, g);
}

}  // namespace kiln::ops::sorting
