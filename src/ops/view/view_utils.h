#pragma once
// Shared geometry helpers for the view ops. Everything works on SymInts and reads metadata only,
// so the same code serves CPU tensors, the meta device and (later) symbolic shapes.
#include <kiln/ops/registry.h>

#include <optional>
#include <string>

namespace kiln::ops::view_detail {

// "[3, 5]": how sizes and dim lists appear in error messages.
std::string shape_str(SymIntList s);
std::string ints_str(IntList v);

// The output description of a view of `self` with the given geometry (same dtype and device).
TensorMeta make_view_meta(const Tensor& self, SymDimVector sizes, SymDimVector strides,
                          SymInt storage_offset);
inline std::vector<TensorMeta> one_view(const Tensor& self, SymDimVector sizes,
                                        SymDimVector strides, SymInt storage_offset) {
  return {make_view_meta(self, std::move(sizes), std::move(strides), std::move(storage_offset))};
}

// Replaces a single -1 in `shape` so that the sizes multiply to numel (PyTorch's infer_size);
// raises kiln::Error naming `op` for two -1s, negative sizes or a product that can't match.
SymDimVector infer_size(SymIntList shape, const SymInt& numel, const char* op);

// Strides that view a tensor of (oldshape, oldstride) as newshape without copying, or nullopt
// when some new dim would span two non-contiguous chunks (PyTorch's computeStride).
std::optional<SymDimVector> compute_stride(SymIntList oldshape, SymIntList oldstride,
                                           SymIntList newshape);

// A size whose value decides how many outputs an op returns (unbind, split): concrete ints pass
// through; a symbolic one is specialized to its hint, with an equality guard recorded so a
// captured graph is only reused for that value. Raises kiln::Error if there is no hint.
int64_t guarded_int(const SymInt& s, const char* op);

// The common shape of several shapes under broadcasting; raises kiln::Error naming `op`.
SymDimVector broadcast_sym_shapes(const std::vector<SymDimVector>& shapes, const char* op);

// The geometry of self.slice(dim, start, end, step) with start/end already clamped to
// [0, size] and start <= end (shared by slice, narrow, split and chunk).
TensorMeta slice_meta(const Tensor& self, int64_t dim, const SymInt& start, const SymInt& end,
                      const SymInt& step);

// The geometry of self.select(dim, index) with index already in [0, size).
TensorMeta select_meta(const Tensor& self, int64_t dim, const SymInt& index);

}  // namespace kiln::ops::view_detail
