#include "ops/indexing/advanced_index.h"

#include "ops/indexing/strided_loop.h"
#include "ops/reduction/reduce_meta.h"

#include <kiln/core/parallel.h>
#include <kiln/ops/indexing.h>

#include <cstring>

namespace kiln::ops::indexing {
namespace {

std::string shape_str(IntList s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

bool is_mask(const Tensor& index) {
  return index.dtype() == DType::Bool || index.dtype() == DType::UInt8;
}

// The broadcast shape of the index tensors, with PyTorch's message naming all of them. Vec:
// DimVector over sizes(), or SymDimVector over sym_sizes() (comparisons may record guards).
template <typename Vec>
Vec broadcast_index_shapes(const std::vector<Tensor>& indices, const char* op) {
  Vec out;
  bool ok = true;
  for (const Tensor& t : indices) {
    if (!t.defined()) continue;
    const auto s = [&] {
      if constexpr (std::is_same_v<Vec, DimVector>) {
        return t.sizes();
      } else {
        return t.sym_sizes();
      }
    }();
    if (s.size() > out.size()) {
      Vec wider(s.size() - out.size(), 1);
      for (const auto& v : out) wider.push_back(v);
      out = wider;
    }
    const size_t lead = out.size() - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      auto& o = out[lead + i];
      if (o == s[i] || s[i] == 1) continue;
      if (o == 1) {
        o = s[i];
      } else {
        ok = false;
      }
    }
  }
  if (!ok) {
    std::vector<std::string> shapes;
    for (const Tensor& t : indices) {
      if (t.defined()) {
        std::vector<std::string> dims;
        for (const SymInt& d : t.sym_sizes()) dims.push_back(d.str());
        shapes.push_back(fmt::format("[{}]", fmt::join(dims, ", ")));
      }
    }
    throw IndexError(fmt::format(
        "{}(): shape mismatch: indexing tensors could not be broadcast together with shapes {}", op,
        fmt::join(shapes, ", ")));
  }
  return out;
}

// The order of self[indices]'s dims (PyTorch's rule): the broadcast index dims replace the
// indexed dims in place when those are adjacent, and go first otherwise. Calls slice(d) for each
// full-slice dim d of self and index_dims() once, in result order. `dims`: the indexed dims.
template <typename Slice, typename IndexDims>
void place_result_dims(const std::vector<Tensor>& indices, const std::vector<size_t>& dims,
                       size_t self_dim, Slice slice, IndexDims index_dims) {
  const bool adjacent = dims.back() - dims.front() + 1 == dims.size();
  if (adjacent) {
    for (size_t d = 0; d < dims.front(); ++d) slice(d);
    index_dims();
    for (size_t d = dims.back() + 1; d < self_dim; ++d) slice(d);
  } else {
    index_dims();
    for (size_t d = 0; d < self_dim; ++d) {
      if (!indices[d].defined()) slice(d);
    }
  }
}

std::vector<size_t> indexed_dims(const std::vector<Tensor>& indices) {
  std::vector<size_t> dims;
  for (size_t d = 0; d < indices.size(); ++d) {
    if (indices[d].defined()) dims.push_back(d);
  }
  return dims;
}

// Merges adjacent dims that every operand walks with one stride, and drops size-1 dims, so the
// inner loop runs over the longest possible row. Keeps at least one dim.
void coalesce(DimVector& sizes, std::initializer_list<DimVector*> strides) {
  DimVector s;
  std::vector<DimVector> st(strides.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    bool merge = !s.empty();
    size_t k = 0;
    for (DimVector* op : strides) {
      if (merge && st[k].back() != (*op)[d] * sizes[d]) merge = false;
      ++k;
    }
    k = 0;
    if (merge) {
      s.back() *= sizes[d];
      for (DimVector* op : strides) st[k++].back() = (*op)[d];
    } else {
      s.push_back(sizes[d]);
      for (DimVector* op : strides) st[k++].push_back((*op)[d]);
    }
  }
  if (s.empty()) {
    s.push_back(1);
    for (auto& v : st) v.push_back(0);
  }
  sizes = s;
  size_t k = 0;
  for (DimVector* op : strides) *op = st[k++];
}

// The gather loop for elements of type E (an unsigned integer of the element's size: the copy
// moves bits, whatever the dtype).
template <typename E>
void gather_rows(E* out, const E* self, const IndexPlan& plan, const int64_t* offsets) {
  DimVector sizes = plan.result_sizes;
  DimVector self_strides = plan.self_strides;
  DimVector offset_strides = plan.offset_strides;
  DimVector out_strides = contiguous_strides(sizes);
  coalesce(sizes, {&out_strides, &self_strides, &offset_strides});
  const auto ndim = static_cast<int64_t>(sizes.size());
  const int64_t inner = sizes.back();
  const int64_t ss = self_strides.back(), fs = offset_strides.back();
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < ndim; ++d) rows *= sizes[static_cast<size_t>(d)];
  // Rows are independent (each writes its own slice of out): split them across threads.
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(inner, 1)),
               [&](int64_t first, int64_t last) {
                 for (int64_t r = first; r < last; ++r) {
                   int64_t rest = r, base_s = 0, base_f = 0;
                   for (int64_t d = ndim - 2; d >= 0; --d) {
                     const auto ud = static_cast<size_t>(d);
                     const int64_t c = rest % sizes[ud];
                     rest /= sizes[ud];
                     base_s += c * self_strides[ud];
                     base_f += c * offset_strides[ud];
                   }
                   E* o = out + r * inner;
                   if (fs == 0) {
                     // A slice of self along a sliced dim: a strided or contiguous row copy.
                     const E* src = self + base_s + offsets[base_f];
                     if (ss == 1) {
                       std::memcpy(o, src, static_cast<size_t>(inner) * sizeof(E));
                     } else {
                       for (int64_t j = 0; j < inner; ++j) o[j] = src[j * ss];
                     }
                   } else {
                     const E* src = self + base_s;
                     const int64_t* off = offsets + base_f;
                     for (int64_t j = 0; j < inner; ++j) o[j] = src[j * ss + off[j * fs]];
                   }
                 }
               });
}

}  // namespace

void fail_data_dependent(const char* op) {
  KILN_FAIL(
      "{}(): the output shape depends on the input's values (data-dependent), so it cannot be "
      "computed from metadata alone (meta device)",
      op);
}

void check_indices(const Tensor& self, TensorList indices, const char* op) {
  KILN_CHECK_T(IndexError, !indices.empty(), "{}(): at least one index must be provided", op);
  int64_t consumed = 0;
  for (const Tensor& index : indices) {
    if (!index.defined()) {
      ++consumed;
      continue;
    }
    const DType d = index.dtype();
    KILN_CHECK_T(TypeError, d == DType::Int64 || d == DType::Int32 || is_mask(index),
                 "{}(): tensors used as indices must be long, int, byte or bool tensors, got {}",
                 op, torch_type_name(d));
    KILN_CHECK(!is_mask(index) || index.dim() > 0,
               "{}(): a 0-dim boolean index is not supported; index an unsqueezed tensor with a "
               "1-element mask instead",
               op);
    consumed += is_mask(index) ? index.dim() : 1;
  }
  KILN_CHECK_T(IndexError, consumed <= self.dim(),
               "{}(): too many indices for tensor of dimension {} (got {})", op, self.dim(),
               consumed);
  int64_t start = 0;
  for (const Tensor& index : indices) {
    if (!index.defined() || !is_mask(index)) {
      ++start;
      continue;
    }
    for (int64_t j = 0; j < index.dim(); ++j) {
      KILN_CHECK_T(IndexError, index.size(j) == self.size(start + j),
                   "{}(): The shape of the mask {} at index {} does not match the shape of the "
                   "indexed tensor {} at index {}",
                   op, shape_str(index.sizes()), j, shape_str(self.sizes()), start + j);
    }
    start += index.dim();
  }
}

std::vector<Tensor> expand_indices(const Tensor& self, TensorList indices, const char* op) {
  check_indices(self, indices, op);
  std::vector<Tensor> out;
  for (const Tensor& index : indices) {
    if (!index.defined() || !is_mask(index)) {
      out.push_back(index);
      continue;
    }
    if (index.is_meta() || self.is_meta()) fail_data_dependent(op);
    const Tensor coords = kiln::nonzero(index);  // [n, mask dims]
    for (int64_t j = 0; j < index.dim(); ++j) out.push_back(coords.select(1, j));
  }
  out.resize(static_cast<size_t>(self.dim()));
  return out;
}

IndexPlan plan_index(IntList self_sizes, IntList self_strides, const std::vector<Tensor>& indices,
                     const char* op) {
  IndexPlan p;
  const std::vector<size_t> dims = indexed_dims(indices);
  auto push_slice = [&](size_t d) {
    p.result_sizes.push_back(self_sizes[d]);
    p.self_strides.push_back(self_strides[d]);
    p.offset_strides.push_back(0);
  };
  if (dims.empty()) {  // every entry a full slice: a copy of self
    for (size_t d = 0; d < self_sizes.size(); ++d) push_slice(d);
    return p;
  }
  p.index_shape = broadcast_index_shapes<DimVector>(indices, op);
  const DimVector index_strides = contiguous_strides(p.index_shape);
  place_result_dims(indices, dims, self_sizes.size(), push_slice, [&] {
    for (size_t k = 0; k < p.index_shape.size(); ++k) {
      p.result_sizes.push_back(p.index_shape[k]);
      p.self_strides.push_back(0);
      p.offset_strides.push_back(index_strides[k]);
    }
  });
  return p;
}

SymDimVector index_result_sizes(SymIntList self_sizes, const std::vector<Tensor>& indices,
                                const char* op) {
  const std::vector<size_t> dims = indexed_dims(indices);
  if (dims.empty()) return SymDimVector(self_sizes.begin(), self_sizes.end());
  const SymDimVector index_shape = broadcast_index_shapes<SymDimVector>(indices, op);
  SymDimVector out;
  place_result_dims(
      indices, dims, self_sizes.size(), [&](size_t d) { out.push_back(self_sizes[d]); },
      [&] { out.insert(out.end(), index_shape.begin(), index_shape.end()); });
  return out;
}

void compute_offsets(IndexPlan& plan, IntList self_sizes, IntList self_strides,
                     const std::vector<Tensor>& indices, const char* op) {
  int64_t n = 1;
  for (int64_t s : plan.index_shape) n *= s;
  plan.offsets.assign(static_cast<size_t>(n), 0);
  if (n == 0) return;
  int64_t* offsets = plan.offsets.data();
  const DimVector positions = contiguous_strides(plan.index_shape);
  for (size_t d = 0; d < indices.size(); ++d) {
    if (!indices[d].defined()) continue;
    const Tensor index = indices[d].broadcast_to(plan.index_shape);
    const int64_t size = self_sizes[d], stride = self_strides[d];
    const auto dim = static_cast<int64_t>(d);
    auto add = [&]<typename T>() {
      const T* p = index.data_ptr<T>();
      strided::for_each_parallel<2>(
          plan.index_shape, {index.strides(), positions}, [&](const std::array<int64_t, 2>& off) {
            int64_t v = static_cast<int64_t>(p[off[0]]);
            KILN_CHECK_T(IndexError, v >= -size && v < size,
                         "{}(): index {} is out of bounds for dimension {} with size {}", op, v,
                         dim, size);
            if (v < 0) v += size;
            offsets[off[1]] += v * stride;
          });
    };
    if (index.dtype() == DType::Int64) {
      add.template operator()<int64_t>();
    } else {
      add.template operator()<int32_t>();
    }
  }
}

void gather_indexed(const Tensor& out, const Tensor& self, const IndexPlan& plan) {
  if (out.numel() == 0) return;
  const int64_t zero = 0;  // all slices: one zero offset
  const int64_t* offsets = plan.offsets.empty() ? &zero : plan.offsets.data();
  strided::dispatch_by_size(self.itemsize(), [&]<typename E>() {
    gather_rows(static_cast<E*>(out.data_ptr()), static_cast<const E*>(self.data_ptr()), plan,
                offsets);
  });
}

void put_indexed(const Tensor& target, const Tensor& values, const IndexPlan& plan,
                 bool accumulate) {
  int64_t numel = 1;
  for (int64_t s : plan.result_sizes) numel *= s;
  if (numel == 0) return;
  const std::vector<int64_t> zero{0};
  const int64_t* offsets = plan.offsets.empty() ? zero.data() : plan.offsets.data();
  const DimVector value_strides(values.strides().begin(), values.strides().end());
  const size_t last = plan.result_sizes.empty() ? 0 : plan.result_sizes.size() - 1;
  auto inner = [&](const DimVector& s) { return s.empty() ? int64_t{0} : s[last]; };
  const int64_t ds = inner(plan.self_strides), fs = inner(plan.offset_strides),
                vs = inner(value_strides);
  KILN_DISPATCH_ALL(target.dtype(), "index_put", [&]<typename T>() {
    using acc_t = opmath_t<T>;
    T* dst = target.data_ptr<T>();
    const T* src = values.data_ptr<T>();
    // Serial and in row-major order: duplicates resolve deterministically (accumulate sums
    // them in index order; assignment keeps the last).
    strided::for_each_row<3>(
        plan.result_sizes,
        {IntList(plan.self_strides), IntList(plan.offset_strides), IntList(value_strides)},
        [&](const std::array<int64_t, 3>& off, int64_t n) {
          T* d = dst + off[0];
          const int64_t* f = offsets + off[1];
          const T* v = src + off[2];
          if (accumulate) {
            for (int64_t j = 0; j < n; ++j) {
              T& x = d[j * ds + f[j * fs]];
              x = static_cast<T>(static_cast<acc_t>(x) + static_cast<acc_t>(v[j * vs]));
            }
          } else {
            for (int64_t j = 0; j < n; ++j) d[j * ds + f[j * fs]] = v[j * vs];
          }
        });
  });
}

}  // namespace kiln::ops::indexing
