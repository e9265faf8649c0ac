// view, reshape, flatten, unflatten: ops that reinterpret the sizes of a tensor.
#include "ops/samples.h"
#include "ops/view/view_utils.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/sym_size_ops.h>
#include <kiln/ops/view.h>

namespace kiln::ops {

using namespace view_detail;

namespace {

std::vector<TensorMeta> view_op_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  SymDimVector shape = infer_size(args[1].to_sym_int_list(), self.sym_numel(), "view");
  std::optional<SymDimVector> strides = compute_stride(self.sym_sizes(), self.sym_strides(), shape);
  KILN_CHECK(strides.has_value(),
             "view: view size is not compatible with input tensor's size and stride (at least one "
             "dimension spans across two contiguous subspaces). Use .reshape(...) instead. Input "
             "sizes {}, strides {}, target shape {}",
             shape_str(self.sym_sizes()), shape_str(self.sym_strides()), shape_str(shape));
  return one_view(self, std::move(shape), std::move(*strides), self.impl()->sym_storage_offset());
}

// A view when the strides allow one, else a contiguous copy viewed with the new shape.
std::vector<Tensor> reshape_composite(const Stack& args) {
  static const OpDef& view_op = OpRegistry::instance().get("view");
  static const OpDef& to_copy = OpRegistry::instance().get("_to_copy");
  const Tensor& self = args[0].to_tensor();
  SymDimVector shape = infer_size(args[1].to_sym_int_list(), self.sym_numel(), "reshape");
  if (compute_stride(self.sym_sizes(), self.sym_strides(), shape)) {
    return call(view_op, {self, shape});
  }
  Tensor copy = call1(to_copy, {self, std::nullopt, true});
  return call(view_op, {copy, shape});
}

std::vector<Tensor> flatten_composite(const Stack& args) {
  static const OpDef& reshape_op = OpRegistry::instance().get("reshape");
  const Tensor& self = args[0].to_tensor();
  const int64_t ndim = self.dim();
  const int64_t start = wrap_dim(args[1].to_int(), ndim, "flatten");
  const int64_t end = wrap_dim(args[2].to_int(), ndim, "flatten");
  KILN_CHECK(start <= end, "flatten: invalid args: start_dim ({}) cannot come after end_dim ({})",
             start, end);
  if (ndim == 0) return call(reshape_op, {self, std::vector<int64_t>{1}});
  if (start == end) return {self};
  SymIntList sizes = self.sym_sizes();
  SymDimVector shape(sizes.begin(), sizes.begin() + start);
  SymInt flat = 1;
  for (int64_t d = start; d <= end; ++d) flat = flat * sizes[static_cast<size_t>(d)];
  shape.push_back(flat);
  shape.insert(shape.end(), sizes.begin() + end + 1, sizes.end());
  return call(reshape_op, {self, shape});
}

std::vector<Tensor> unflatten_composite(const Stack& args) {
  static const OpDef& view_op = OpRegistry::instance().get("view");
  const Tensor& self = args[0].to_tensor();
  KILN_CHECK_T(IndexError, self.dim() > 0, "unflatten: cannot unflatten a 0-dim tensor");
  const int64_t dim = wrap_dim(args[1].to_int(), self.dim(), "unflatten");
  SymDimVector sizes = args[2].to_sym_int_list();
  KILN_CHECK(!sizes.empty(), "unflatten: sizes must be non-empty");
  SymDimVector inner = infer_size(sizes, self.sym_sizes()[static_cast<size_t>(dim)], "unflatten");
  SymDimVector shape = self.sym_sizes().vec();
  shape.erase(shape.begin() + dim);
  shape.insert(shape.begin() + dim, inner.begin(), inner.end());
  return call(view_op, {self, shape});
}

}  // namespace

KILN_OP("view(Tensor(a) self, SymInt[] size) -> Tensor(a)")
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          return {reshape_symint(a.grad_outputs[0], a.inputs[0].to_tensor().sym_sizes())};
        },
        DerivativeReads::Nothing)
    .view(view_op_meta)
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({3, 4}, kFloat32), std::vector<int64_t>{4, 3}}, "2-D to 2-D"},
          {{make_sample({2, 3, 4}, kFloat64), std::vector<int64_t>{-1, 4}}, "inferred dim"},
          {{make_sample({6, 4}, kFloat32).t(), std::vector<int64_t>{2, 2, 6}},
           "transposed, splitting a dim"},
          {{make_noncontiguous_sample({3, 4}, kInt64), std::vector<int64_t>{3, 2, 2}},
           "strided last dim"},
          {{make_sample({}, kFloat32), std::vector<int64_t>{1, 1}}, "0-dim to 2-D"},
          {{make_sample({1}, kFloat32), std::vector<int64_t>{}}, "1-elem to 0-dim"},
          {{make_sample({0, 3}, kFloat32), std::vector<int64_t>{3, 0, 5}}, "empty"},
      };
    });

KILN_OP("reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)")
    .composite(reshape_composite)
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({3, 4}, kFloat32), std::vector<int64_t>{2, 6}}, "contiguous: a view"},
          {{make_sample({4, 3}, kFloat32).t(), std::vector<int64_t>{12}}, "transposed: a copy"},
          {{make_sample({4, 3}, kInt32).t(), std::vector<int64_t>{3, 2, 2}}, "transposed split"},
          {{make_noncontiguous_sample({2, 3}, kFloat64), std::vector<int64_t>{-1}}, "strided"},
          {{make_sample({}, kFloat32), std::vector<int64_t>{-1}}, "0-dim"},
          {{make_sample({2, 0}, kFloat32), std::vector<int64_t>{0, 4}}, "empty"},
      };
    });

KILN_OP("flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)")
    .composite(flatten_composite)
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({2, 3, 4}, kFloat32)}, "all dims"},
          {{make_sample({2, 3, 4, 5}, kFloat32), int64_t{1}, int64_t{-2}}, "middle dims"},
          {{make_sample({4, 3}, kFloat64).t(), int64_t{0}, int64_t{1}}, "transposed: a copy"},
          {{make_sample({}, kFloat32)}, "0-dim"},
          {{make_sample({2, 0, 3}, kFloat32), int64_t{1}}, "empty"},
      };
    });

KILN_OP("unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)")
    .composite(unflatten_composite)
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({2, 12}, kFloat32), int64_t{1}, std::vector<int64_t>{3, 4}}, "last dim"},
          {{make_sample({6, 5}, kFloat32), int64_t{-2}, std::vector<int64_t>{-1, 2}},
           "negative dim, inferred size"},
          {{make_sample({6, 4}, kInt64).t(), int64_t{1}, std::vector<int64_t>{2, 3}}, "transposed"},
          {{make_sample({0, 4}, kFloat32), int64_t{1}, std::vector<int64_t>{2, 2}}, "empty"},
      };
    });

}  // namespace kiln::ops

namespace kiln {

Tensor view(const Tensor& self, IntList size, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("view");
  return ops::call1(op, {self, size}, &loc);
}

Tensor reshape(const Tensor& self, IntList size, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("reshape");
  return ops::call1(op, {self, size}, &loc);
}

Tensor flatten(const Tensor& self, int64_t start_dim, int64_t end_dim,
               const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("flatten.using_ints");
  return ops::call1(op, {self, start_dim, end_dim}, &loc);
}

Tensor unflatten(const Tensor& self, int64_t dim, IntList sizes, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("unflatten.int");
  return ops::call1(op, {self, dim, sizes}, &loc);
}

}  // namespace kiln
