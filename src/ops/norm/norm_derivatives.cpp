// Derivatives of the normalization ops, in kiln ops. Layer, batch and group norm call their aten
// backward ops (fused kernels; double backward through those ops' decompositions) and add the
// terms for gradients flowing into the statistics outputs (mean, rstd/invstd) when any flowed,
// as PyTorch's infinitely_differentiable_native_*_backward does. rms_norm has no aten backward
// op: its formula is written here.
#include "ops/norm/norm_backward_common.h"

#include <kiln/ops/unary.h>

#include <limits>

namespace kiln::ops::norm {
namespace {

IValue mask3(bool a, bool b, bool c) {
  return IValue(std::vector<int64_t>{int64_t{a}, int64_t{b}, int64_t{c}});
}

// Gradient of input from gradients of mean(x) and rstd = (var(x) + eps)^-1/2 over groups of
// `count` elements: g_mean / count - g_rstd * rstd^3 * (x - mean) / count, with mean, rstd and
// their gradients shaped to broadcast against x.
Tensor statistics_grad(const BackwardArgs& a, const Tensor& x, const Tensor& mean,
                       const Tensor& rstd, const Tensor& g_mean, const Tensor& g_rstd,
                       double count) {
  Tensor out;
  if (a.flowed(1)) out = g_mean / count;
  if (a.flowed(2)) {
    Tensor t = (g_rstd * rstd * rstd * rstd / -count) * (x - mean);
    out = out.defined() ? out + t : t;
  }
  return out;
}

Tensor plus(const Tensor& a, const Tensor& b) {
  if (!b.defined()) return a;
  return a.defined() ? a + b : b;
}

}  // namespace

std::vector<Tensor> native_layer_norm_derivative(const BackwardArgs& a) {
  static const OpDef& backward = op_named("native_layer_norm_backward");
  const Tensor& x = a.inputs[0].to_tensor();
  const Tensor weight = a.inputs[2].to_optional_tensor(), bias = a.inputs[3].to_optional_tensor();
  const Tensor &mean = a.outputs[1], &rstd = a.outputs[2];
  std::vector<Tensor> g =
      call(backward, {a.grad_outputs[0], x, a.inputs[1], mean, rstd, optional_arg(weight),
                      optional_arg(bias), mask3(true, weight.defined(), bias.defined())});
  if (a.flowed(1) || a.flowed(2)) {
    int64_t count = 1;
    for (int64_t s : a.inputs[1].to_int_list()) count *= s;
    g[0] = plus(g[0], statistics_grad(a, x, mean, rstd, a.grad_outputs[1], a.grad_outputs[2],
                                      static_cast<double>(count)));
  }
  return g;
}

std::vector<Tensor> rms_norm_derivative(const BackwardArgs& a) {
  // y = x * rstd * w, rstd = (mean(x^2) + eps)^-1/2 over the normalized dims:
  // dx = rstd * (g - xhat * mean(g * xhat)), g = dy * w, xhat = x * rstd; dw = sum(dy * xhat).
  const Tensor& input = a.inputs[0].to_tensor();
  const Tensor weight = a.inputs[2].to_optional_tensor();
  const int64_t k = static_cast<int64_t>(a.inputs[1].to_int_list().size());
  std::vector<int64_t> inner, outer;
  for (int64_t d = 0; d < input.dim(); ++d) (d < input.dim() - k ? outer : inner).push_back(d);
  // Computed in float32 at least, as the forward kernel does.
  const DType compute = input.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  const Tensor x = input.to(compute);
  const double eps = a.inputs[3].to_optional_double().value_or(
      compute == DType::Float64 ? std::numeric_limits<double>::epsilon()
                                : static_cast<double>(std::numeric_limits<float>::epsilon()));
  const Tensor rstd = kiln::rsqrt((x * x).mean(inner, true) + eps);
  const Tensor xhat = x * rstd;
  const Tensor dy = a.grad_outputs[0].to(compute);
  const Tensor g = weight.defined() ? dy * weight.to(compute) : dy;
  Tensor dx = rstd * (g - xhat * (g * xhat).mean(inner, true));
  Tensor dw = weight.defined() ? (dy * xhat).sum(outer) : Tensor();
  return {dx, dw};
}

std::vector<Tensor> native_batch_norm_derivative(const BackwardArgs& a) {
  static const OpDef& backward = op_named("native_batch_norm_backward");
  const Tensor& x = a.inputs[0].to_tensor();
  const Tensor weight = a.inputs[1].to_optional_tensor();
  const Tensor running_mean = a.inputs[3].to_optional_tensor();
  const Tensor running_var = a.inputs[4].to_optional_tensor();
  const bool train = a.inputs[5].to_bool();
  const double eps = a.inputs[7].to_double();
  const Tensor &save_mean = a.outputs[1], &save_invstd = a.outputs[2];
  std::vector<Tensor> g =
      call(backward, {a.grad_outputs[0], x, optional_arg(weight), optional_arg(running_mean),
                      optional_arg(running_var), train ? IValue(save_mean) : IValue(),
                      train ? IValue(save_invstd) : IValue(), train, eps, mask3(true, true, true)});
  std::vector<Tensor> out{g[0], weight.defined() ? g[1] : Tensor(), g[2], Tensor(), Tensor()};
  if (train && (a.flowed(1) || a.flowed(2))) {
    const int64_t C = x.size(1);
    std::vector<int64_t> shape(static_cast<size_t>(x.dim()), 1);
    shape[1] = C;
    const double count = static_cast<double>(x.numel() / C);
    out[0] =
        plus(out[0], statistics_grad(a, x, save_mean.reshape(shape), save_invstd.reshape(shape),
                                     a.grad_outputs[1].reshape(shape),
                                     a.grad_outputs[2].reshape(shape), count));
  }
  if (!train) {
    // Evaluation differentiates the running statistics too (the output is a smooth function of
    // them; PyTorch leaves them without gradient). y = (x - rm) * invstd * w + b, invstd = (rv +
    // eps)^-1/2:
    //   dy/drm = -sum(dy) * invstd * w,  dy/drv = -sum(dy * (x - rm)) * w * invstd^3 / 2.
    const Tensor invstd = kiln::rsqrt(running_var + eps);
    const Tensor scale = weight.defined() ? invstd * weight : invstd;
    out[3] = -(g[2] * scale);
    out[4] = g[1] * scale * invstd * -0.5;
  }
  return out;
}

std::vector<Tensor> native_group_norm_derivative(const BackwardArgs& a) {
  static const OpDef& backward = op_named("native_group_norm_backward");
  const Tensor& x = a.inputs[0].to_tensor();
  const Tensor weight = a.inputs[1].to_optional_tensor(), bias = a.inputs[2].to_optional_tensor();
  const int64_t N = a.inputs[3].to_int(), C = a.inputs[4].to_int(), HxW = a.inputs[5].to_int();
  const int64_t group = a.inputs[6].to_int();
  const Tensor &mean = a.outputs[1], &rstd = a.outputs[2];
  std::vector<Tensor> g =
      call(backward, {a.grad_outputs[0], x, mean, rstd, optional_arg(weight), N, C, HxW, group,
                      mask3(true, weight.defined(), bias.defined())});
  if ((a.flowed(1) || a.flowed(2)) && x.numel() > 0) {
    const std::vector<int64_t> v4{N, group, C / group, HxW}, s4{N, group, 1, 1};
    const Tensor extra = statistics_grad(
        a, x.reshape(v4), mean.reshape(s4), rstd.reshape(s4), a.grad_outputs[1].reshape(s4),
        a.grad_outputs[2].reshape(s4), static_cast<double>(C / group * HxW));
    g[0] = plus(g[0], extra.reshape(x.sizes()));
  }
  return g;
}

}  // namespace kiln::ops::norm
