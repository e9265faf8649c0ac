// diagonal: the strided view of the elements where two dims' indices differ by `offset`.
#include "ops/samples.h"
#include "ops/view/view_utils.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/view.h>

#include <algorithm>

namespace kiln::ops {

using namespace view_detail;

namespace {

std::vector<TensorMeta> diagonal_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const int64_t offset = args[1].to_int();
  const int64_t ndim = self.dim();
  const int64_t d1 = wrap_dim(args[2].to_int(), ndim, "diagonal");
  const int64_t d2 = wrap_dim(args[3].to_int(), ndim, "diagonal");
  KILN_CHECK(d1 != d2, "diagonal: dimensions cannot be identical {}, {}", args[2].to_int(),
             args[3].to_int());
  SymDimVector sizes = self.sym_sizes().vec();
  SymDimVector strides = self.sym_strides().vec();
  const SymInt size1 = sizes[static_cast<size_t>(d1)];
  const SymInt size2 = sizes[static_cast<size_t>(d2)];
  const SymInt stride1 = strides[static_cast<size_t>(d1)];
  const SymInt stride2 = strides[static_cast<size_t>(d2)];
  SymInt diag = offset >= 0 ? std::min(size1, size2 - offset) : std::min(size1 + offset, size2);
  if (diag < 0) diag = 0;
  SymInt storage_offset = self.impl()->sym_storage_offset();
  // An offset past the end gives an empty diagonal; leave the offset alone then.
  if (diag != 0) {
    storage_offset =
        offset >= 0 ? storage_offset + stride2 * offset : storage_offset - stride1 * offset;
  }
  sizes.erase(sizes.begin() + std::max(d1, d2));
  sizes.erase(sizes.begin() + std::min(d1, d2));
  strides.erase(strides.begin() + std::max(d1, d2));
  strides.erase(strides.begin() + std::min(d1, d2));
  sizes.push_back(diag);
  strides.push_back(stride1 + stride2);
  return one_view(self, std::move(sizes), std::move(strides), std::move(storage_offset));
}

// diagonal as the as_strided prim over the geometry its meta function computes.
std::vector<Tensor> diagonal_decomposition(const Stack& args) {
  static const OpDef& as_strided = OpRegistry::instance().get("as_strided");
  const TensorMeta m = diagonal_meta(args)[0];
  return call(as_strided, {args[0], m.sizes, m.strides, m.storage_offset});
}

}  // namespace

KILN_OP("diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)")
    .view(diagonal_meta)
    .decomposition(diagonal_decomposition)
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          // The gradient written onto the diagonal of a zero tensor (diagonal_backward).
          const Tensor& self = a.inputs[0].to_tensor();
          Tensor grad = zeros(self.sizes(), a.grad_outputs[0].options());
          grad.diagonal(a.inputs[1].to_int(), a.inputs[2].to_int(), a.inputs[3].to_int())
              .copy_(a.grad_outputs[0]);
          return {grad};
        },
        DerivativeReads::Nothing)
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({4, 4}, kFloat32)}, "square"},
          {{make_sample({3, 5}, kFloat32), int64_t{2}}, "positive offset"},
          {{make_sample({5, 3}, kFloat64), int64_t{-1}}, "negative offset"},
          {{make_sample({2, 3, 4}, kFloat32), int64_t{1}, int64_t{-1}, int64_t{0}},
           "3-D, negative dim"},
          {{make_noncontiguous_sample({3, 3}, kInt32)}, "non-contiguous"},
          {{make_sample({3, 3}, kFloat32), int64_t{5}}, "offset past the end"},
          {{make_sample({0, 3}, kFloat32)}, "empty"},
      };
    });

}  // namespace kiln::ops

namespace kiln {

Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2,
                const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("diagonal");
  return ops::call1(op, {self, offset, dim1, dim2}, &loc);
}

}  // namespace kiln
