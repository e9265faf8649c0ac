#include "ops/view/view_utils.h"

namespace kiln::ops::view_detail {

std::string shape_str(SymIntList s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + s[i].str();
  return out + "]";
}

std::string ints_str(IntList v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

TensorMeta make_view_meta(const Tensor& self, SymDimVector sizes, SymDimVector strides,
                          SymInt storage_offset) {
  TensorMeta m;
  m.sizes = std::move(sizes);
  m.strides = std::move(strides);
  m.storage_offset = std::move(storage_offset);
  m.dtype = self.dtype();
  m.device = self.device();
  return m;
}

SymDimVector infer_size(SymIntList shape, const SymInt& numel, const char* op) {
  SymDimVector out(shape.begin(), shape.end());
  SymInt known = 1;
  std::optional<size_t> infer_dim;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      KILN_CHECK(!infer_dim, "{}: only one dimension can be inferred, got shape {}", op,
                 shape_str(shape));
      infer_dim = d;
    } else {
      KILN_CHECK(shape[d] >= 0, "{}: invalid shape dimension {} in shape {}", op, shape[d].str(),
                 shape_str(shape));
      known = known * shape[d];
    }
  }
  if (numel == known || (infer_dim && known > 0 && numel % known == 0)) {
    if (infer_dim) {
      KILN_CHECK(known != 0,
                 "{}: cannot reshape tensor of 0 elements into shape {} because the "
                 "unspecified dimension size -1 can be any value and is ambiguous",
                 op, shape_str(shape));
      out[*infer_dim] = numel / known;
    }
    return out;
  }
  if (infer_dim && known == 0) {
    KILN_FAIL(
        "{}: cannot reshape tensor of {} elements into shape {} because the unspecified "
        "dimension size -1 can be any value and is ambiguous",
        op, numel.str(), shape_str(shape));
  }
  KILN_FAIL("{}: shape '{}' is invalid for input of size {}", op, shape_str(shape), numel.str());
}

std::optional<SymDimVector> compute_stride(SymIntList oldshape, SymIntList oldstride,
                                           SymIntList newshape) {
  const int64_t new_ndim = static_cast<int64_t>(newshape.size());
  if (oldshape.empty()) return SymDimVector(newshape.size(), SymInt(int64_t{1}));
  SymInt numel = 1;
  for (const SymInt& s : oldshape) numel = numel * s;
  if (numel == 0 && oldshape == newshape) return SymDimVector(oldstride.begin(), oldstride.end());
  SymDimVector newstride(newshape.size());
  if (numel == 0) {
    // No element is ever read, so any strides do; use contiguous ones.
    for (int64_t d = new_ndim - 1; d >= 0; --d) {
      if (d == new_ndim - 1) {
        newstride[d] = 1;
      } else {
        const SymInt& next = newshape[d + 1];
        newstride[d] = (next > 1 ? next : SymInt(int64_t{1})) * newstride[d + 1];
      }
    }
    return newstride;
  }
  // Walk the old dims from the innermost, grouping them into chunks that are contiguous with
  // each other; every chunk must be covered exactly by a run of new dims.
  int64_t view_d = new_ndim - 1;
  SymInt chunk_base_stride = oldstride.back();
  SymInt tensor_numel = 1;
  SymInt view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(oldshape.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel = tensor_numel * oldshape[tensor_d];
    bool chunk_ends =
        tensor_d == 0 || (oldshape[tensor_d - 1] != 1 &&
                          oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || newshape[view_d] == 1)) {
      newstride[view_d] = view_numel * chunk_base_stride;
      view_numel = view_numel * newshape[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (tensor_d > 0) {
      chunk_base_stride = oldstride[tensor_d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return newstride;
}

int64_t guarded_int(const SymInt& s, const char* op) {
  if (!s.is_symbolic()) return s.expect_int();
  std::optional<int64_t> hint = s.maybe_int();
  KILN_CHECK(hint.has_value(), "{}: the number of outputs depends on the symbolic size {}", op,
             s.str());
  KILN_CHECK(s == *hint, "{}: symbolic size {} disagrees with its hint {}", op, s.str(), *hint);
  return *hint;
}

SymDimVector broadcast_sym_shapes(const std::vector<SymDimVector>& shapes, const char* op) {
  size_t ndim = 0;
  for (const auto& s : shapes) ndim = std::max(ndim, s.size());
  SymDimVector out(ndim, SymInt(int64_t{1}));
  for (const auto& s : shapes) {
    size_t lead = ndim - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      SymInt& o = out[lead + i];
      if (s[i] == o || s[i] == 1) continue;
      KILN_CHECK(o == 1,
                 "{}: the size of tensor a ({}) must match the size of tensor b ({}) at "
                 "non-singleton dimension {}",
                 op, o.str(), s[i].str(), lead + i);
      o = s[i];
    }
  }
  return out;
}

TensorMeta slice_meta(const Tensor& self, int64_t dim, const SymInt& start, const SymInt& end,
                      const SymInt& step) {
  SymDimVector sizes = self.sym_sizes().vec();
  SymDimVector strides = self.sym_strides().vec();
  const auto d = static_cast<size_t>(dim);
  SymInt offset = self.impl()->sym_storage_offset() + start * strides[d];
  sizes[d] = (end - start + step - 1) / step;  // rounds up: the last partial step counts
  strides[d] = strides[d] * step;
  return make_view_meta(self, std::move(sizes), std::move(strides), std::move(offset));
}

TensorMeta select_meta(const Tensor& self, int64_t dim, const SymInt& index) {
  SymDimVector sizes = self.sym_sizes().vec();
  SymDimVector strides = self.sym_strides().vec();
  const auto d = static_cast<size_t>(dim);
  SymInt offset = self.impl()->sym_storage_offset() + index * strides[d];
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  return make_view_meta(self, std::move(sizes), std::move(strides), std::move(offset));
}

}  // namespace kiln::ops::view_detail
