// take_along_dim: gather with PyTorch's broadcasting of self and indices over every dim but
// `dim` (or over the flattened tensors when dim is None). Written in terms of gather.
#include "ops/indexing/index_common.h"
#include "ops/iterator/tensor_iterator.h"
#include "ops/reduction/reduce_meta.h"
#include "ops/samples.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/indexing.h>
#include <kiln/ops/registry.h>

namespace kiln::ops {
namespace {

using namespace indexing;

std::vector<Tensor> take_along_dim_composite(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const Tensor& indices = args[1].to_tensor();
  KILN_CHECK_T(TypeError, indices.dtype() == DType::Int64,
               "take_along_dim(): dtype of indices should be int64 but got {}",
               torch_type_name(indices.dtype()));
  if (args[2].is_none()) {
    return {kiln::gather(self.reshape({-1}), 0, indices.reshape({-1}))};
  }
  KILN_CHECK(self.dim() == indices.dim(),
             "take_along_dim(): input and indices should have the same number of dimensions, but "
             "got {} dimensions for input, and {} dimensions for indices",
             self.dim(), indices.dim());
  const int64_t dim = wrap_dim(args[2].to_int(), self.dim(), "take_along_dim");
  const auto d = static_cast<size_t>(dim);
  // Each side broadcasts to the other's sizes, except along dim where it keeps its own.
  DimVector self_sizes(self.sizes().begin(), self.sizes().end());
  self_sizes[d] = indices.size(dim);
  const DimVector index_shape = broadcast_shapes(self_sizes, indices.sizes(), "take_along_dim");
  DimVector index_sizes(indices.sizes().begin(), indices.sizes().end());
  index_sizes[d] = self.size(dim);
  const DimVector self_shape = broadcast_shapes(index_sizes, self.sizes(), "take_along_dim");
  return {kiln::gather(self.broadcast_to(self_shape), dim, indices.broadcast_to(index_shape))};
}

}  // namespace

KILN_OP("take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor")
    .composite(take_along_dim_composite)
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({3, 4}, kFloat32), make_sample({3, 2}, kInt64, 0, 4), 1}, "dim 1"},
          {{make_sample({3, 4}, kFloat64), make_sample({5, 1}, kInt64, 0, 3), 0},
           "indices broadcast"},
          {{make_sample({1, 4}, kInt32), make_sample({3, 2}, kInt64, 0, 4), -1}, "self broadcast"},
          {{make_noncontiguous_sample({4, 3}, kFloat32), make_sample({5}, kInt64, 0, 12)},
           "dim None, non-contiguous"},
          {{make_sample({}, kFloat32), from_vector<int64_t>({0}, {})}, "0-dim"},
          {{make_sample({3, 4}, kFloat32), from_vector<int64_t>({}, {3, 0}), 1}, "empty"},
          {{make_sample({3, 4}, kFloat32), make_sample({3, 2}, kInt32, 0, 4), 1}, "int32 indices"},
          {{make_sample({3, 4}, kFloat32), make_sample({2}, kInt64, 0, 4), 1}, "rank mismatch"},
      };
    });

}  // namespace kiln::ops

namespace kiln {

Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim,
                      const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const ops::OpDef& op = ops::OpRegistry::instance().get("take_along_dim");
  ops::IValue d = dim ? ops::IValue(*dim) : ops::IValue();
  return ops::call1(op, {self, indices, d}, &loc);
}

Tensor Tensor::take_along_dim(const Tensor& indices, std::optional<int64_t> dim,
                              const kiln::SourceLocation& loc) const {
  return kiln::take_along_dim(*this, indices, dim, loc);
}

}  // namespace kiln
