// native_dropout (structured, kernel in dropout.kernel.cpp), and the dropout / feature_dropout
// composites with their in-place forms, as aten has them. Every mask comes from native_dropout's
// kernel and the current Philox generator, so a seed fixes it.
#include "ops/dropout/dropout_kernels.h"
#include "ops/random/generator_scope.h"
#include "ops/samples.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/dropout.h>
#include <kiln/ops/registry.h>

namespace kiln::ops {

cpu::KernelDispatch<DropoutKernel> dropout_kernels;

namespace {

using Metas = std::vector<TensorMeta>;
using Outs = std::vector<Tensor>;

void check_p(double p, const char* op) {
  KILN_CHECK(p >= 0.0 && p <= 1.0, "{}: dropout probability has to be between 0 and 1, but got {}",
             op, p);
}

Tensor native_dropout_output(const Tensor& input, double p) {
  static const OpDef& native = op_named("native_dropout");
  return call(native, {input, p, true})[0];
}

// What dropout and feature_dropout return without drawing: the input itself (p = 0, eval, empty)
// or input * 0 (p = 1); nullopt when a mask must be drawn.
std::optional<Tensor> trivial_dropout(const Tensor& input, double p, bool train, const char* op) {
  check_p(p, op);
  if (p == 0.0 || !train || input.sym_numel() == 0) return input;
  if (p == 1.0) return input * zeros({}, input.dtype());
  return std::nullopt;
}

// (N, C, 1, ...): one scale per channel, from native_dropout over ones.
Tensor feature_noise(const Tensor& input, double p, const char* op) {
  KILN_CHECK(input.dim() >= 2,
             "{}: feature dropout requires at least 2 dimensions in the input (N, C, ...), got "
             "size {}",
             op, fmt::format("[{}]", fmt::join(input.sizes(), ", ")));
  DimVector shape(static_cast<size_t>(input.dim()), 1);
  shape[0] = input.size(0);
  shape[1] = input.size(1);
  return native_dropout_output(ones(shape, TensorOptions(input.dtype()).device(input.device())), p);
}

// mask = rand(float32) < 1 - p (the kernel's draw), output = input * mask / (1 - p) computed in
// float32 (float64 for float64 inputs), as the kernel.
std::vector<Tensor> native_dropout_decomposition(const Stack& a) {
  static const OpDef& rand = op_named("rand");
  const Tensor& input = a[0].to_tensor();
  KILN_CHECK_T(TypeError, is_floating_point(input.dtype()),
               "native_dropout: expected a floating point input, got {}",
               dtype_name(input.dtype()));
  const double p = a[1].to_double();
  check_p(p, "native_dropout");
  if (!(a[2].is_none() || a[2].to_bool())) {
    return {input.clone(),
            full(input.sizes(), true, TensorOptions(DType::Bool).device(input.device()))};
  }
  const double keep = 1.0 - p;
  const Tensor mask = call1(rand, {input.sym_sizes(), DType::Float32, input.device()}) < keep;
  const DType compute = input.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  const Tensor scale = mask.to(compute) * (keep == 0.0 ? 0.0 : 1.0 / keep);
  return {(input.to(compute) * scale).to(input.dtype()), mask};
}

std::vector<Sample> native_dropout_samples() {
  return {
      {{make_sample({3, 4}, kFloat32), 0.5, true}, "train"},
      {{make_sample({3, 4}, kFloat64), 0.2, IValue()}, "train=None"},
      {{make_sample({3, 4}, kFloat32), 0.5, false}, "eval"},
      {{make_noncontiguous_sample({4, 5}, kFloat32), 0.3, true}, "non-contiguous"},
      {{make_sample({}, kFloat32), 0.5, true}, "0-dim"},
      {{make_sample({0, 3}, kFloat32), 0.5, true}, "empty"},
      {{make_sample({3, 4}, kFloat32), 0.0, true}, "p=0"},
      {{make_sample({3, 4}, kFloat32), 1.0, true}, "p=1"},
      {{make_sample({3, 4}, kBFloat16), 0.5, true}, "bfloat16"},
      {{make_sample({3, 4}, kFloat32), 1.5, true}, "p above 1"},
  };
}

std::vector<Sample> dropout_samples() {
  return {
      {{make_sample({3, 4}, kFloat32), 0.5, true}, "train"},
      {{make_sample({3, 4}, kFloat32), 0.5, false}, "eval"},
      {{make_sample({3, 4}, kFloat64), 0.0, true}, "p=0"},
      {{make_sample({3, 4}, kFloat32), 1.0, true}, "p=1"},
      {{make_sample({0}, kFloat32), 0.5, true}, "empty"},
      {{make_sample({3, 4}, kFloat32), -0.1, true}, "negative p"},
  };
}

std::vector<Sample> feature_dropout_samples() {
  return {
      {{make_sample({2, 3, 4, 5}, kFloat32), 0.5, true}, "(N, C, H, W)"},
      {{make_sample({2, 3, 4}, kFloat64), 0.3, true}, "(N, C, L)"},
      {{make_sample({2, 3, 4, 5}, kFloat32), 0.5, false}, "eval"},
      {{make_sample({2, 3, 4, 5}, kFloat32), 1.0, true}, "p=1"},
      {{make_sample({4}, kFloat32), 0.5, true}, "1-D"},
  };
}

}  // namespace

KILN_OP("native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)")
    .meta([](const Stack& a) {
      const Tensor& input = a[0].to_tensor();
      KILN_CHECK_T(TypeError, is_floating_point(input.dtype()),
                   "native_dropout: expected a floating point input, got {}",
                   dtype_name(input.dtype()));
      check_p(a[1].to_double(), "native_dropout");
      const auto sizes = input.sym_sizes().vec();
      return Metas{TensorMeta::contiguous(sizes, input.dtype(), input.device()),
                   TensorMeta::contiguous(sizes, DType::Bool, input.device())};
    })
    .cpu([](const Stack& a, const Outs& out) {
      const Tensor& input = a[0].to_tensor();
      const double p = a[1].to_double();
      const bool train = a[2].is_none() || a[2].to_bool();
      Tensor output = out[0], mask = out[1];
      if (!train) {
        output.copy_(input);
        mask.fill_(true);
        return;
      }
      const int64_t n = input.numel();
      if (n == 0) return;
      auto [seed, offset] = random_detail::current_generator().seed_and_reserve(
          random_detail::philox_blocks(n, kDropoutWords));
      const Tensor x = input.contiguous();
      dropout_kernels(x.data_ptr(), output.data_ptr(), mask.data_ptr<bool>(), input.dtype(), n, p,
                      random_detail::PhiloxStream{seed, offset});
    })
    .decomposition(native_dropout_decomposition)
    .random()
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          // The kept elements' gradient, scaled as the forward scaled them.
          const double p = a.inputs[1].to_double();
          const bool train = a.inputs[2].is_none() || a.inputs[2].to_bool();
          const double scale = !train ? 1.0 : p == 1.0 ? 0.0 : 1.0 / (1.0 - p);
          return {a.grad_outputs[0] * (a.outputs[1] * scale)};
        },
        DerivativeReads::Outputs, {1})
    .samples(native_dropout_samples);

KILN_OP("dropout(Tensor input, float p, bool train) -> Tensor")
    .composite([](const Stack& a) {
      const Tensor& input = a[0].to_tensor();
      const double p = a[1].to_double();
      if (auto t = trivial_dropout(input, p, a[2].to_bool(), "dropout")) return Outs{*t};
      return Outs{native_dropout_output(input, p)};
    })
    .random()
    .samples(dropout_samples);

KILN_OP("dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)")
    .composite([](const Stack& a) {
      Tensor self = a[0].to_tensor();
      const double p = a[1].to_double();
      check_p(p, "dropout_");
      if (p == 0.0 || !a[2].to_bool() || self.numel() == 0) return Outs{self};
      if (p == 1.0) return Outs{self.mul_(0)};
      self.copy_(native_dropout_output(self, p));
      return Outs{self};
    })
    .random()
    .samples(dropout_samples);

KILN_OP("feature_dropout(Tensor input, float p, bool train) -> Tensor")
    .composite([](const Stack& a) {
      const Tensor& input = a[0].to_tensor();
      const double p = a[1].to_double();
      if (auto t = trivial_dropout(input, p, a[2].to_bool(), "feature_dropout")) return Outs{*t};
      return Outs{input * feature_noise(input, p, "feature_dropout")};
    })
    .random()
    .samples(feature_dropout_samples);

KILN_OP("feature_dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)")
    .composite([](const Stack& a) {
      Tensor self = a[0].to_tensor();
      const double p = a[1].to_double();
      check_p(p, "feature_dropout_");
      if (p == 0.0 || !a[2].to_bool() || self.numel() == 0) return Outs{self};
      if (p == 1.0) return Outs{self.mul_(0)};
      return Outs{self.mul_(feature_noise(self, p, "feature_dropout_"))};
    })
    .random()
    .samples(feature_dropout_samples);

}  // namespace kiln::ops

namespace kiln {

std::pair<Tensor, Tensor> native_dropout(const Tensor& input, double p, bool train, Generator* gen,
                                         const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::op_named("native_dropout");
  random_detail::GeneratorScope scope(gen);
  auto outs = ops::call(op, {input, p, train}, &loc);
  return {outs[0], outs[1]};
}

Tensor dropout(const Tensor& input, double p, bool train, Generator* gen,
               const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::op_named("dropout");
  random_detail::GeneratorScope scope(gen);
  return ops::call1(op, {input, p, train}, &loc);
}

Tensor& dropout_(Tensor& input, double p, bool train, Generator* gen,
                 const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::op_named("dropout_");
  random_detail::GeneratorScope scope(gen);
  ops::call(op, {input, p, train}, &loc);
  return input;
}

Tensor feature_dropout(const Tensor& input, double p, bool train, Generator* gen,
                       const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::op_named("feature_dropout");
  random_detail::GeneratorScope scope(gen);
  return ops::call1(op, {input, p, train}, &loc);
}

Tensor& feature_dropout_(Tensor& input, double p, bool train, Generator* gen,
                         const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::op_named("feature_dropout_");
  random_detail::GeneratorScope scope(gen);
  ops::call(op, {input, p, train}, &loc);
  return input;
}

Tensor dropout2d(const Tensor& input, double p, bool train, Generator* gen,
                 const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  KILN_CHECK(input.dim() == 3 || input.dim() == 4,
             "dropout2d: expected an input of (N, C, H, W) or unbatched (C, H, W), got {}-D",
             input.dim());
  if (input.dim() == 4) return feature_dropout(input, p, train, gen);
  return feature_dropout(input.unsqueeze(0), p, train, gen).squeeze(0);
}

}  // namespace kiln
