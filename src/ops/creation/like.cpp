// empty_like, zeros_like, ones_like, full_like: a new tensor with another's sizes, keeping a dense
// input's memory layout (PyTorch's preserve_format); dtype and device follow the input unless
// given.
#include "ops/copy/copy_kernels.h"
#include "ops/creation/layout_samples.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>

namespace kiln::ops {
namespace {

// args: self, [fill_value,] dtype, device; `first_option` is the index of dtype.
TensorMeta like_meta(const Stack& args, size_t first_option) {
  const Tensor& self = args[0].to_tensor();
  TensorMeta m;
  m.sizes = self.sym_sizes().vec();
  m.strides = layout_following_strides(self.sym_sizes(), std::span<const Tensor>(&self, 1));
  m.dtype = args[first_option].to_optional_dtype().value_or(self.dtype());
  m.device = args[first_option + 1].is_none() ? self.device() : args[first_option + 1].to_device();
  return m;
}

void fill_output(const Tensor& out, const Scalar& value) {
  if (out.numel() == 0) return;
  auto iter = TensorIteratorConfig().add_output(out).op_name("full_like").build();
  fill_kernels(iter, value);
}

// ---- decompositions: the full and empty_strided prims with the *_like geometry ----

std::vector<Tensor> full_like_decomposition(const Stack& args, size_t first_option,
                                            const Scalar& value) {
  const TensorMeta m = like_meta(args, first_option);
  return call(op_named("full"), {m.sizes, value, m.dtype, m.device});
}

std::vector<Sample> like_samples() {
  return {{{make_sample({3, 4}, kFloat32)}, "2-D"},
          {{transposed_sample(4, 6, kFloat64)}, "transposed keeps layout"},
          {{gapped_sample(3, 4, kInt32)}, "non-contiguous int32"},
          {{make_sample({}, kFloat32)}, "0-dim"},
          {{make_sample({0, 3}, kFloat32)}, "empty"},
          {{make_sample({2, 3}, kFloat32), kInt64}, "dtype override"}};
}

}  // namespace

KILN_OP("empty_like(Tensor self, *, ScalarType? dtype=None, Device? device=None) -> Tensor")
    .meta([](const Stack& args) { return std::vector<TensorMeta>{like_meta(args, 1)}; })
    .cpu([](const Stack&, const std::vector<Tensor>&) {})
    .decomposition([](const Stack& args) {
      const TensorMeta m = like_meta(args, 1);
      return call(op_named("empty_strided"), {m.sizes, m.strides, m.dtype, m.device});
    })
    .not_differentiable()
    .samples(like_samples);

KILN_OP("zeros_like(Tensor self, *, ScalarType? dtype=None, Device? device=None) -> Tensor")
    .meta([](const Stack& args) { return std::vector<TensorMeta>{like_meta(args, 1)}; })
    .cpu([](const Stack&, const std::vector<Tensor>& out) { fill_output(out[0], 0); })
    .decomposition([](const Stack& args) { return full_like_decomposition(args, 1, 0); })
    .not_differentiable()
    .samples(like_samples);

KILN_OP("ones_like(Tensor self, *, ScalarType? dtype=None, Device? device=None) -> Tensor")
    .meta([](const Stack& args) { return std::vector<TensorMeta>{like_meta(args, 1)}; })
    .cpu([](const Stack&, const std::vector<Tensor>& out) { fill_output(out[0], 1); })
    .decomposition([](const Stack& args) { return full_like_decomposition(args, 1, 1); })
    .not_differentiable()
    .samples(like_samples);

KILN_OP(
    "full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Device? device=None) "
    "-> Tensor")
    .meta([](const Stack& args) { return std::vector<TensorMeta>{like_meta(args, 2)}; })
    .cpu([](const Stack& args, const std::vector<Tensor>& out) {
      fill_output(out[0], args[1].to_scalar());
    })
    .decomposition([](const Stack& args) {
      return full_like_decomposition(args, 2, args[1].to_scalar());
    })
    .not_differentiable()
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({3, 4}, kFloat32), Scalar(2.5)}, "float"},
          {{transposed_sample(3, 4, kInt64), Scalar(int64_t{-7})}, "transposed int"},
          {{make_sample({2, 2}, kFloat32), Scalar(true), kBool}, "bool override"}};
    });

KILN_OP("scalar_tensor(Scalar s, *, ScalarType? dtype=None, Device? device=None) -> Tensor")
    .meta([](const Stack& args) {
      return std::vector<TensorMeta>{
          TensorMeta::contiguous({}, args[1].to_optional_dtype().value_or(default_float_dtype()),
                                 args[2].to_device_or_cpu())};
    })
    .cpu([](const Stack& args, const std::vector<Tensor>& out) {
      fill_output(out[0], args[0].to_scalar());
    })
    .decomposition([](const Stack& args) {
      return call(op_named("full"),
                  {std::vector<int64_t>{}, args[0],
                   args[1].to_optional_dtype().value_or(default_float_dtype()), args[2]});
    })
    .not_differentiable()
    .samples([] {
      return std::vector<Sample>{{{Scalar(3.5)}, "float"}, {{Scalar(int64_t{4}), kInt32}, "int32"}};
    });

}  // namespace kiln::ops

namespace kiln {

namespace {
// The device for a *_like call: the input's unless the options name another.
Device like_device(const Tensor& other, const TensorOptions& options) {
  return options.device().is_cpu() ? other.device() : options.device();
}

Tensor like(const char* name, const Tensor& other, const TensorOptions& options) {
  const auto& op = ops::OpRegistry::instance().get(name);
  Tensor t = ops::call1(op, {other, options.dtype_opt(), like_device(other, options)});
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}
}  // namespace

Tensor empty_like(const Tensor& other, TensorOptions options, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  return like("empty_like", other, options);
}
Tensor zeros_like(const Tensor& other, TensorOptions options, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  return like("zeros_like", other, options);
}
Tensor ones_like(const Tensor& other, TensorOptions options, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  return like("ones_like", other, options);
}

Tensor full_like(const Tensor& other, const Scalar& fill_value, TensorOptions options,
                 const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::OpRegistry::instance().get("full_like");
  Tensor t =
      ops::call1(op, {other, fill_value, options.dtype_opt(), like_device(other, options)}, &loc);
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

}  // namespace kiln
