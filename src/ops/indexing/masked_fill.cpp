// masked_fill (Scalar and 0-dim Tensor value): self with value wherever a boolean mask, which
// broadcasts against self, is true.
#include "ops/indexing/strided_loop.h"
#include "ops/iterator/tensor_iterator.h"
#include "ops/reduction/reduce_meta.h"
#include "ops/samples.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/indexing.h>
#include <kiln/ops/registry.h>

namespace kiln::ops {
namespace {

void check_mask(const Tensor& mask) {
  KILN_CHECK_T(TypeError, mask.dtype() == DType::Bool,
               "masked_fill_ only supports boolean masks, but got mask with dtype {}",
               torch_type_name(mask.dtype()));
}

void check_value_tensor(const Tensor& value) {
  KILN_CHECK(value.dim() == 0,
             "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {} "
             "dimension(s).",
             value.dim());
}

template <bool TensorValue>
std::vector<TensorMeta> masked_fill_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const Tensor& mask = args[1].to_tensor();
  check_mask(mask);
  if constexpr (TensorValue) check_value_tensor(args[2].to_tensor());
  // The functional form broadcasts self and mask together (PyTorch's expand_outplace).
  return {TensorMeta::contiguous(
      broadcast_sym_shapes(self.sym_sizes(), mask.sym_sizes(), "masked_fill"), self.dtype(),
      self.device())};
}

template <bool TensorValue>
void masked_fill_impl(const Stack& args, const std::vector<Tensor>& outs) {
  const Tensor& self = args[0].to_tensor();
  const Scalar value = TensorValue ? args[2].to_tensor().item() : args[2].to_scalar();
  Tensor target = strided::dense_target(outs[0], self.dtype());
  // Expanded views read self and mask at each output position (stride 0 where broadcast).
  const Tensor self_b = self.expand(target.sizes());
  const Tensor mask_b = args[1].to_tensor().expand(target.sizes());
  const bool* m = mask_b.data_ptr<bool>();
  KILN_DISPATCH_ALL(self.dtype(), "masked_fill", [&]<typename T>() {
    const T fill = value.to<T>();
    T* out = target.data_ptr<T>();
    const T* in = self_b.data_ptr<T>();
    strided::for_each_parallel<3>(
        target.sizes(), {target.strides(), self_b.strides(), mask_b.strides()},
        [&](const std::array<int64_t, 3>& off) { out[off[0]] = m[off[2]] ? fill : in[off[1]]; });
  });
  strided::commit(outs[0], target);
}

// The filled positions are constants: self's gradient is zero there, and a Tensor value's is
// the sum of the gradient over them (the mask broadcast against self).
std::vector<Tensor> masked_fill_scalar_derivative(const BackwardArgs& a) {
  return {a.grad_outputs[0].masked_fill(a.inputs[1].to_tensor(), 0.0), Tensor()};
}
std::vector<Tensor> masked_fill_tensor_derivative(const BackwardArgs& a) {
  const Tensor& g = a.grad_outputs[0];
  const Tensor& mask = a.inputs[1].to_tensor();
  return {g.masked_fill(mask, 0.0), Tensor(), where(mask, g, 0.0).sum()};
}

// where(mask, value, self), the value a 0-dim tensor of self's dtype.
template <bool TensorValue>
std::vector<Tensor> masked_fill_decomposition(const Stack& args) {
  masked_fill_meta<TensorValue>(args);  // the mask's dtype, the value's rank, broadcasting
  const Tensor& self = args[0].to_tensor();
  const Tensor value = TensorValue ? args[2].to_tensor().to(self.dtype())
                                   : full({}, args[2].to_scalar(), self.options());
  return {where(args[1].to_tensor(), value, self)};
}

Tensor bool_mask(IntList sizes, uint64_t seed) { return make_sample(sizes, kBool, 0, 2, seed); }

}  // namespace

[[maybe_unused]] static const OpDef& masked_fill_scalar_op = declare(
    OpBuilder("masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor")
        .meta(masked_fill_meta<false>)
        .cpu(masked_fill_impl<false>)
        .decomposition(masked_fill_decomposition<false>)
        .derivative(masked_fill_scalar_derivative)
        .inplace_variant()
        .samples([] {
          return std::vector<Sample>{
              {{make_sample({3, 4}, kFloat32), bool_mask({3, 4}, 1), Scalar(-1.5)}, "same shape"},
              {{make_sample({3, 4}, kFloat64), bool_mask({4}, 2), Scalar(7.0)}, "broadcast mask"},
              {{make_noncontiguous_sample({3, 4}, kInt64), bool_mask({3, 1}, 3),
                Scalar(int64_t{9})},
               "non-contiguous self, column mask"},
              {{make_sample({}, kFloat32), bool_mask({}, 4), Scalar(2.0)}, "0-dim"},
              {{make_sample({0, 3}, kFloat32), bool_mask({3}, 5), Scalar(1.0)}, "empty"},
              {{make_sample({4}, kBool), bool_mask({4}, 6), Scalar(true)}, "bool"},
          };
        })
        .out_variant());

[[maybe_unused]] static const OpDef& masked_fill_tensor_op = declare(
    OpBuilder("masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor")
        .meta(masked_fill_meta<true>)
        .cpu(masked_fill_impl<true>)
        .decomposition(masked_fill_decomposition<true>)
        .derivative(masked_fill_tensor_derivative)
        .inplace_variant()
        .samples([] {
          return std::vector<Sample>{
              {{make_sample({3, 4}, kFloat32), bool_mask({3, 4}, 1), scalar_tensor(-2.5, kFloat32)},
               "same shape"},
              {{make_noncontiguous_sample({3, 4}, kFloat64), bool_mask({1, 4}, 2),
                scalar_tensor(3.0, kFloat64)},
               "broadcast mask, non-contiguous"},
              {{make_sample({5}, kInt32), bool_mask({5}, 3), scalar_tensor(int64_t{4}, kInt32)},
               "int32"},
              {{make_sample({4}, kFloat64), bool_mask({3, 4}, 4), scalar_tensor(1.5, kFloat64)},
               "mask broadcasts self"},
          };
        })
        .out_variant());

}  // namespace kiln::ops

namespace kiln {

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value,
                   const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("masked_fill.Scalar");
  return ops::call1(op, {self, mask, value}, &loc);
}
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value,
                   const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("masked_fill.Tensor");
  return ops::call1(op, {self, mask, value}, &loc);
}
Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Scalar& value,
                     const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("masked_fill_.Scalar");
  ops::call(op, {self, mask, value}, &loc);
  return self;
}
Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Tensor& value,
                     const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("masked_fill_.Tensor");
  ops::call(op, {self, mask, value}, &loc);
  return self;
}

}  // namespace kiln
