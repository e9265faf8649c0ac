// Backward ops of activations, with aten's schemas: gelu_backward and threshold_backward (relu's
// gradient). Each runs a fused kernel (activation_backward.kernel.cpp) and is differentiated
// through its decomposition, which doubles as the reference the kernel is tested against.
#include "ops/binary/binary_samples.h"
#include "ops/binary/elementwise_common.h"
#include "ops/unary/unary_kernels.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/unary.h>

#include <cmath>
#include <numbers>

namespace kiln::ops {

cpu::KernelDispatch<ActivationBackwardKernel> activation_backward_kernels;

namespace {

// The promoted dtype of (grad_output, self), which must be floating for gelu_backward.
DType backward_dtype(const Stack& args, const char* op, bool floating_only) {
  const DType d = result_type(args[0].to_tensor(), args[1].to_tensor());
  if (d == DType::Bool || (floating_only && !is_floating_point(d))) unsupported(op, d);
  return d;
}

ActivationBackward gelu_kind(const Stack& args) {
  const std::string& approximate = args[2].to_string();
  KILN_CHECK(approximate == "none" || approximate == "tanh",
             "gelu_backward: approximate must be 'none' or 'tanh', got '{}'", approximate);
  return approximate == "tanh" ? ActivationBackward::GeluTanh : ActivationBackward::GeluErf;
}

void run_backward(const Stack& args, const Tensor& out, DType dtype, ActivationBackward kind,
                  double param, const char* op) {
  if (out.numel() == 0) return;
  auto iter = elementwise_iter(out, {args[0].to_tensor(), args[1].to_tensor()}, dtype, dtype, op);
  activation_backward_kernels(iter, kind, param);
}

// grad * d gelu(x) / dx in kiln ops.
std::vector<Tensor> gelu_backward_decomposition(const Stack& args) {
  const Tensor& g = args[0].to_tensor();
  const Tensor& x = args[1].to_tensor();
  if (gelu_kind(args) == ActivationBackward::GeluErf) {
    const double inv_sqrt_2pi = 0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2;
    const Tensor cdf = (erf(x * (0.5 * std::numbers::sqrt2)) + 1.0) * 0.5;
    const Tensor pdf = exp(x * x * -0.5) * inv_sqrt_2pi;
    return {g * (cdf + x * pdf)};
  }
  const double beta = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;  // sqrt(2 / pi)
  const double kappa = 0.044715;
  const Tensor x2 = x * x;
  const Tensor t = tanh((x + x2 * x * kappa) * beta);
  const Tensor du = (x2 * (3.0 * kappa) + 1.0) * beta;
  return {g * ((t + 1.0) * 0.5 + x * 0.5 * (1.0 - t * t) * du)};
}

std::vector<Tensor> threshold_backward_decomposition(const Stack& args) {
  return {where(args[1].to_tensor() <= args[2].to_scalar(), 0.0, args[0].to_tensor())};
}

// grad_output and self have one shape in practice (PyTorch's oneDNN path rejects broadcasting).
std::vector<Sample> gelu_backward_samples() {
  std::vector<Sample> s;
  for (const char* approximate : {"none", "tanh"}) {
    for (Sample& t : binary_samples(kFloat32, -3.0, 3.0, {approximate})) {
      if (t.description.find("broadcast") == std::string::npos && t.description != "empty") {
        s.push_back(std::move(t));
      }
    }
  }
  s.push_back({{make_sample({0, 4}, kFloat32), make_sample({0, 4}, kFloat32), "tanh"}, "empty"});
  s.push_back(
      {{make_sample({2, 37}, kFloat64, -1, 1, 1), make_sample({2, 37}, kFloat64, -8, 8, 2), "none"},
       "float64, wide range"});
  s.push_back(
      {{make_sample({2, 37}, kFloat64, -1, 1, 3), make_sample({2, 37}, kFloat64, -8, 8, 4), "tanh"},
       "float64 tanh, wide range"});
  s.push_back(
      {{make_sample({300}, kFloat32, -1, 1, 5), make_sample({300}, kFloat32, -8, 8, 6), "none"},
       "wide range crossing SIMD width"});
  s.push_back({{make_sample({3, 4}, kBFloat16), make_sample({3, 4}, kBFloat16, -3, 3, 7), "tanh"},
               "bfloat16"});
  s.push_back({{make_sample({3, 4}, kFloat32), make_sample({3, 4}, kFloat32), "sigmoid"},
               "bad approximate"});
  return s;
}

std::vector<Sample> threshold_backward_samples() {
  std::vector<Sample> s = binary_samples(kFloat32, -3.0, 3.0, {Scalar(0.0)});
  for (Sample& t : binary_samples(kFloat64, -3.0, 3.0, {Scalar(0.5)})) s.push_back(std::move(t));
  s.push_back({{make_sample({3, 4}, kInt64, -5, 5), make_sample({3, 4}, kInt64, -5, 5, 2),
                Scalar(int64_t{1})},
               "int64"});
  return s;
}

}  // namespace

KILN_OP("gelu_backward(Tensor grad_output, Tensor self, *, str approximate='none') -> Tensor")
    .meta([](const Stack& args) {
      gelu_kind(args);
      const DType d = backward_dtype(args, "gelu_backward", true);
      return std::vector<TensorMeta>{
          elementwise_meta({args[0].to_tensor(), args[1].to_tensor()}, d, "gelu_backward")};
    })
    .cpu([](const Stack& args, const std::vector<Tensor>& out) {
      run_backward(args, out[0], backward_dtype(args, "gelu_backward", true), gelu_kind(args), 0.0,
                   "gelu_backward");
    })
    .decomposition(gelu_backward_decomposition)
    .tolerance(1e-5, 1e-5)
    .samples(gelu_backward_samples);

KILN_OP("threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor")
    .meta([](const Stack& args) {
      const DType d = backward_dtype(args, "threshold_backward", false);
      return std::vector<TensorMeta>{
          elementwise_meta({args[0].to_tensor(), args[1].to_tensor()}, d, "threshold_backward")};
    })
    .cpu([](const Stack& args, const std::vector<Tensor>& out) {
      run_backward(args, out[0], backward_dtype(args, "threshold_backward", false),
                   ActivationBackward::Threshold, args[2].to_scalar().to<double>(),
                   "threshold_backward");
    })
    .decomposition(threshold_backward_decomposition)
    .samples(threshold_backward_samples);

}  // namespace kiln::ops
