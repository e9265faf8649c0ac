// copy_, fill_, clone, _to_copy, contiguous: the ops that move values between tensors.
#include "ops/copy/copy_kernels.h"
#include "ops/samples.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/view.h>

namespace kiln::ops {

cpu::KernelDispatch<CopyKernel> copy_kernels;
cpu::KernelDispatch<FillKernel> fill_kernels;

namespace {

// A tensor's sizes with strides that keep a dense input's layout (PyTorch's preserve_format).
TensorMeta preserve_layout(const Tensor& t, DType dtype) {
  TensorMeta m;
  m.sizes = t.sym_sizes().vec();
  m.strides = layout_following_strides(t.sym_sizes(), std::span<const Tensor>(&t, 1));
  m.dtype = dtype;
  m.device = t.device();
  return m;
}

void copy_impl(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  if (dst.is_same(src)) return;
  auto iter = TensorIteratorConfig().add_output(dst).add_input(src).op_name("copy_").build();
  copy_kernels(iter);
}

}  // namespace

KILN_OP("copy_(Tensor(a!) self, Tensor src) -> Tensor(a!)")
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          // The old value of self is overwritten: no gradient flows to it.
          return {Tensor(), a.grad_outputs[0]};
        },
        DerivativeReads::Nothing)
    .custom(DeviceType::CPU,
            [](const Stack& args) -> std::vector<Tensor> {
              const Tensor& self = args[0].to_tensor();
              const Tensor& src = args[1].to_tensor();
              broadcast_shapes(self.sizes(), src.sizes(), "copy_");  // raises on mismatch
              KILN_CHECK(
                  broadcast_shapes(self.sizes(), src.sizes(), "copy_") == DimVector(self.sizes()),
                  "copy_: source of shape [{}] cannot be broadcast to [{}]",
                  fmt::join(src.sizes(), ", "), fmt::join(self.sizes(), ", "));
              copy_impl(self, src);
              self.impl()->bump_version();
              return {self};
            })
    .custom(DeviceType::Meta,
            [](const Stack& args) -> std::vector<Tensor> { return {args[0].to_tensor()}; })
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({3, 4}, kFloat32), make_sample({3, 4}, kFloat64)}, "float64 into float32"},
          {{make_sample({3, 4}, kFloat32), make_sample({4}, kFloat32)}, "broadcast row"},
          {{make_sample({4, 3}, kFloat32).t(), make_sample({3, 4}, kInt64)},
           "int64 into transposed"},
      };
    });

KILN_OP("fill_(Tensor(a!) self, Scalar value) -> Tensor(a!)")
    .derivative([](const BackwardArgs&) -> std::vector<Tensor> { return {Tensor()}; },
                DerivativeReads::Nothing)
    .custom(DeviceType::CPU,
            [](const Stack& args) -> std::vector<Tensor> {
              const Tensor& self = args[0].to_tensor();
              if (self.numel() > 0) {
                auto iter = TensorIteratorConfig().add_output(self).op_name("fill_").build();
                fill_kernels(iter, args[1].to_scalar());
              }
              self.impl()->bump_version();
              return {self};
            })
    .custom(DeviceType::Meta,
            [](const Stack& args) -> std::vector<Tensor> { return {args[0].to_tensor()}; })
    .decomposition([](const Stack& args) -> std::vector<Tensor> {
      // copy_ of a 0-dim full of self's dtype, broadcast over self.
      Tensor self = args[0].to_tensor();
      self.copy_(full({}, args[1].to_scalar(), self.options()));
      return {self};
    })
    .samples([] {
      return std::vector<Sample>{{{make_sample({2, 3}, kFloat32), Scalar(2.5)}, "float"},
                                 {{make_sample({5}, kInt32), Scalar(int64_t{-7})}, "int"}};
    });

// A copy with a possibly different dtype, keeping a dense input's memory layout.
// contiguous=True gives row-major strides (what contiguous() needs).
KILN_OP("_to_copy(Tensor self, *, ScalarType? dtype=None, bool contiguous=False) -> Tensor")
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          return {a.grad_outputs[0]};  // the engine casts it back to self's dtype
        },
        DerivativeReads::Nothing)
    .meta([](const Stack& args) {
      const Tensor& self = args[0].to_tensor();
      DType dtype = args[1].to_optional_dtype().value_or(self.dtype());
      if (args[2].to_bool()) {
        return std::vector<TensorMeta>{
            TensorMeta::contiguous(self.sym_sizes().vec(), dtype, self.device())};
      }
      return std::vector<TensorMeta>{preserve_layout(self, dtype)};
    })
    .cpu([](const Stack& args, const std::vector<Tensor>& out) {
      copy_impl(out[0], args[0].to_tensor());
    })
    .samples([] {
      return std::vector<Sample>{{{make_sample({3, 5}, kFloat32), kFloat64}, "to float64"},
                                 {{make_sample({3, 5}, kFloat64), kInt32}, "to int32"},
                                 {{make_sample({5, 3}, kFloat32).t(), kFloat16}, "to float16"}};
    });

KILN_OP("clone(Tensor self) -> Tensor")
    .composite([](const Stack& args) {
      static const OpDef& to_copy = OpRegistry::instance().get("_to_copy");
      return call(to_copy, {args[0]});
    })
    .samples([] { return unary_samples(kFloat32); });

}  // namespace kiln::ops

namespace kiln {

Tensor& copy_(Tensor& self, const Tensor& src, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("copy_");
  ops::call(op, {self, src}, &loc);
  return self;
}

Tensor& fill_(Tensor& self, const Scalar& value, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("fill_");
  ops::call(op, {self, value}, &loc);
  return self;
}

Tensor& zero_(Tensor& self, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  return fill_(self, 0);
}

Tensor clone(const Tensor& self, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("clone");
  return ops::call1(op, {self}, &loc);
}

Tensor contiguous(const Tensor& self, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  if (self.is_contiguous()) return self;
  static const auto& op = ops::OpRegistry::instance().get("_to_copy");
  return ops::call1(op, {self, std::nullopt, true}, &loc);
}

Tensor contiguous(const Tensor& self, MemoryFormat fmt, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  if (fmt == MemoryFormat::Preserve || self.is_contiguous(fmt)) return self;
  if (fmt == MemoryFormat::Contiguous) return contiguous(self);
  Tensor out =
      empty_strided(self.sizes(), strides_for_memory_format(self.sizes(), fmt), self.options());
  out.copy_(self);
  return out;
}

Tensor to(const Tensor& self, DType dtype, bool copy, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  if (dtype == self.dtype() && !copy) return self;
  static const auto& op = ops::OpRegistry::instance().get("_to_copy");
  return ops::call1(op, {self, dtype}, &loc);
}

}  // namespace kiln
