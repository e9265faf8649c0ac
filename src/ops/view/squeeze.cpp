// squeeze, unsqueeze: views that drop or add size-1 dimensions.
#include "ops/samples.h"
#include "ops/view/view_utils.h"

#include <kiln/ops/registry.h>
#include <kiln/ops/sym_size_ops.h>
#include <kiln/ops/view.h>

#include <algorithm>

namespace kiln::ops {

using namespace view_detail;

namespace {

// Keeps the dims not marked for removal (only size-1 dims are ever removed).
std::vector<TensorMeta> squeeze_marked(const Tensor& self, const std::vector<bool>& remove) {
  SymIntList sizes = self.sym_sizes();
  SymIntList strides = self.sym_strides();
  SymDimVector new_sizes, new_strides;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (remove[d] && sizes[d] == 1) continue;
    new_sizes.push_back(sizes[d]);
    new_strides.push_back(strides[d]);
  }
  return one_view(self, std::move(new_sizes), std::move(new_strides),
                  self.impl()->sym_storage_offset());
}

std::vector<TensorMeta> squeeze_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  return squeeze_marked(self, std::vector<bool>(static_cast<size_t>(self.dim()), true));
}

std::vector<TensorMeta> squeeze_dim_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  std::vector<bool> remove(static_cast<size_t>(self.dim()), false);
  int64_t d = wrap_dim(args[1].to_int(), self.dim(), "squeeze");
  if (self.dim() > 0) remove[static_cast<size_t>(d)] = true;
  return squeeze_marked(self, remove);
}

std::vector<TensorMeta> squeeze_dims_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  std::vector<int64_t> dims = args[1].to_int_list();
  std::vector<bool> remove(static_cast<size_t>(std::max<int64_t>(self.dim(), 1)), false);
  for (int64_t dim : dims) {
    const auto d = static_cast<size_t>(wrap_dim(dim, self.dim(), "squeeze"));
    KILN_CHECK(!remove[d], "squeeze: dim {} appears multiple times in the list of dims {}", d,
               ints_str(dims));
    remove[d] = true;
  }
  remove.resize(static_cast<size_t>(self.dim()));
  return squeeze_marked(self, remove);
}

std::vector<TensorMeta> unsqueeze_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const int64_t ndim = self.dim();
  const int64_t d = wrap_dim(args[1].to_int(), ndim + 1, "unsqueeze");
  SymDimVector sizes = self.sym_sizes().vec();
  SymDimVector strides = self.sym_strides().vec();
  // The new dim's stride is what the next outer dim would step by (1 at the end), as PyTorch.
  SymInt stride = d >= ndim ? SymInt(int64_t{1})
                            : sizes[static_cast<size_t>(d)] * strides[static_cast<size_t>(d)];
  sizes.insert(sizes.begin() + d, SymInt(int64_t{1}));
  strides.insert(strides.begin() + d, stride);
  return one_view(self, std::move(sizes), std::move(strides), self.impl()->sym_storage_offset());
}

const OpDef& squeeze_dims_op() {
  static const OpDef& op = OpRegistry::instance().get("squeeze.dims");
  return op;
}

// squeeze: squeeze.dims over every size-1 dim.
std::vector<Tensor> squeeze_decomposition(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (self.sym_size(d) == 1) dims.push_back(d);
  }
  return call(squeeze_dims_op(), {self, dims});
}

using IV = std::vector<int64_t>;

}  // namespace

KILN_OP("squeeze(Tensor(a) self) -> Tensor(a)")
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          return {reshape_symint(a.grad_outputs[0], a.inputs[0].to_tensor().sym_sizes())};
        },
        DerivativeReads::Nothing)
    .view(squeeze_meta)
    .decomposition(squeeze_decomposition)
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({1, 3, 1, 4}, kFloat32)}, "several size-1 dims"},
          {{make_sample({4, 1, 3}, kFloat32).transpose(0, 2)}, "transposed"},
          {{make_sample({1, 1}, kFloat64)}, "all size 1"},
          {{make_sample({}, kFloat32)}, "0-dim"},
          {{make_sample({0, 1}, kFloat32)}, "empty"},
      };
    });

KILN_OP("squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)")
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          return {reshape_symint(a.grad_outputs[0], a.inputs[0].to_tensor().sym_sizes())};
        },
        DerivativeReads::Nothing)
    .view(squeeze_dim_meta)
    .decomposition([](const Stack& args) {
      return call(squeeze_dims_op(), {args[0], IV{args[1].to_int()}});
    })
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({3, 1, 4}, kFloat32), int64_t{1}}, "size-1 dim"},
          {{make_sample({3, 1, 4}, kFloat32), int64_t{0}}, "non-1 dim: unchanged"},
          {{make_sample({3, 1}, kInt64), int64_t{-1}}, "negative dim"},
          {{make_sample({}, kFloat32), int64_t{0}}, "0-dim"},
      };
    });

KILN_OP("squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)")
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          return {reshape_symint(a.grad_outputs[0], a.inputs[0].to_tensor().sym_sizes())};
        },
        DerivativeReads::Nothing)
    .view(squeeze_dims_meta)
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({1, 3, 1, 4}, kFloat32), IV{0, 2}}, "two size-1 dims"},
          {{make_sample({1, 3, 1}, kFloat64), IV{-1, 1}}, "one non-1 dim kept"},
          {{make_sample({}, kFloat32), IV{0}}, "0-dim"},
          {{make_sample({1, 0}, kFloat32), IV{0, 1}}, "empty"},
      };
    });

KILN_OP("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)")
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          return {reshape_symint(a.grad_outputs[0], a.inputs[0].to_tensor().sym_sizes())};
        },
        DerivativeReads::Nothing)
    .view(unsqueeze_meta)
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({3, 4}, kFloat32), int64_t{0}}, "front"},
          {{make_sample({3, 4}, kFloat32), int64_t{-1}}, "back"},
          {{make_noncontiguous_sample({3, 4}, kFloat64), int64_t{1}}, "middle, non-contiguous"},
          {{make_sample({}, kInt32), int64_t{0}}, "0-dim"},
          {{make_sample({0, 3}, kFloat32), int64_t{1}}, "empty"},
      };
    });

}  // namespace kiln::ops

namespace kiln {

Tensor squeeze(const Tensor& self, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("squeeze");
  return ops::call1(op, {self}, &loc);
}

Tensor squeeze(const Tensor& self, int64_t dim, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("squeeze.dim");
  return ops::call1(op, {self, dim}, &loc);
}

Tensor squeeze(const Tensor& self, IntList dims, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("squeeze.dims");
  return ops::call1(op, {self, dims}, &loc);
}

Tensor unsqueeze(const Tensor& self, int64_t dim, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("unsqueeze");
  return ops::call1(op, {self, dim}, &loc);
}

}  // namespace kiln
