// Backward ops of activations, with aten's schemas: gelu_backward, threshold_backward (relu's),
// hardtanh_backward (hardtanh's and relu6's), silu_backward, sigmoid_backward, tanh_backward,
// leaky_relu_backward, elu_backward (elu's and selu's) and softplus_backward.
// Each runs a fused kernel (activation_backward.kernel.cpp) and is differentiated through its
// decomposition, which doubles as the reference the kernel is tested against.
#include "ops/binary/binary_samples.h"
#include "ops/binary/elementwise_common.h"
#include "ops/unary/activation_backward_kernels.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/unary.h>

#include <cmath>
#include <numbers>
#include <utility>

namespace kiln::ops {

cpu::KernelDispatch<ActivationBackwardKernel> activation_backward_kernels;

namespace {

// What one call computes: the kernel and its two parameters.
struct BackwardCall {
  ActivationBackward kind;
  ActivationBackwardParams params = {};
};
using CallFn = BackwardCall (*)(const Stack& args);

// One op over (grad_output, x): x is self, or the forward's result for sigmoid/tanh (and elu's
// with is_result), at argument x_index.
struct BackwardDecl {
  const char* schema;
  const char* name;
  bool floating_only;
  CallFn call;
  DecompositionFn decomposition;
  SampleFn samples;
  size_t x_index = 1;
};

// The promoted dtype of (grad_output, x).
DType backward_dtype(const Tensor& g, const Tensor& x, const char* op, bool floating_only) {
  const DType d = result_type(g, x);
  if (d == DType::Bool || (floating_only && !is_floating_point(d))) unsupported(op, d);
  return d;
}

void declare_backward(const BackwardDecl& d) {
  const char* name = d.name;
  const bool floating_only = d.floating_only;
  const CallFn call = d.call;
  const size_t xi = d.x_index;
  declare(OpBuilder(d.schema)
              .meta([=](const Stack& args) {
                call(args);  // argument checks, so that meta tensors raise too
                const Tensor& g = args[0].to_tensor();
                const Tensor& x = args[xi].to_tensor();
                const DType dtype = backward_dtype(g, x, name, floating_only);
                return std::vector<TensorMeta>{elementwise_meta({g, x}, dtype, name)};
              })
              .cpu([=](const Stack& args, const std::vector<Tensor>& out) {
                const BackwardCall c = call(args);
                const Tensor& g = args[0].to_tensor();
                const Tensor& x = args[xi].to_tensor();
                const DType dtype = backward_dtype(g, x, name, floating_only);
                if (out[0].numel() == 0) return;
                auto iter = elementwise_iter(out[0], {g, x}, dtype, dtype, name);
                activation_backward_kernels(iter, c.kind, c.params);
              })
              .decomposition([=, decomposition = d.decomposition](const Stack& args) {
                // The kernel's checks, then its formula in its compute dtype (float32 for
                // 16-bit floats) on operands of the promoted dtype.
                call(args);
                const Tensor& g = args[0].to_tensor();
                const Tensor& x = args[xi].to_tensor();
                const DType dtype = backward_dtype(g, x, name, floating_only);
                const DType compute =
                    dtype == DType::Float16 || dtype == DType::BFloat16 ? DType::Float32 : dtype;
                Stack cast = args;
                cast[0] = g.to(compute);
                cast[xi] = x.to(compute);
                return std::vector<Tensor>{decomposition(cast).at(0).to(dtype)};
              })
              .tolerance(1e-5, 1e-5)
              .samples(d.samples));
}

BackwardCall gelu_call(const Stack& args) {
  const std::string& approximate = args[2].to_string();
  KILN_CHECK(approximate == "none" || approximate == "tanh",
             "gelu_backward: approximate must be 'none' or 'tanh', got '{}'", approximate);
  return {approximate == "tanh" ? ActivationBackward::GeluTanh : ActivationBackward::GeluErf};
}

// ---- decompositions: grad times the activation's derivative, in kiln ops, with the kernels'
// formulas (activation_backward.kernel.cpp); operands arrive in the compute dtype ----

std::vector<Tensor> gelu_backward_decomposition(const Stack& args) {
  const Tensor& g = args[0].to_tensor();
  const Tensor& x = args[1].to_tensor();
  if (gelu_call(args).kind == ActivationBackward::GeluErf) {
    const double inv_sqrt_2pi = 0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2;
    const Tensor cdf = (erf(x * (0.5 * std::numbers::sqrt2)) + 1.0) * 0.5;
    const Tensor pdf = exp(x * -0.5 * x) * inv_sqrt_2pi;
    return {g * (cdf + x * pdf)};
  }
  const double beta = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;  // sqrt(2 / pi)
  const double kappa = 0.044715;
  const Tensor x2 = x * x;
  const Tensor t = tanh((x + x2 * kappa * x) * beta);
  const Tensor du = (x2 * (3.0 * kappa) + 1.0) * beta;
  return {g * ((t + 1.0) * 0.5 + x * 0.5 * (1.0 - t * t) * du)};
}

std::vector<Tensor> threshold_backward_decomposition(const Stack& args) {
  return {where(args[1].to_tensor() <= args[2].to_scalar(), Scalar(0), args[0].to_tensor())};
}

std::vector<Tensor> hardtanh_backward_decomposition(const Stack& args) {
  const Tensor& x = args[1].to_tensor();
  return {where((x <= args[2].to_scalar()) | (x >= args[3].to_scalar()), Scalar(0),
                args[0].to_tensor())};
}

std::vector<Tensor> silu_backward_decomposition(const Stack& args) {
  const Tensor& x = args[1].to_tensor();
  const Tensor s = 1.0 / (exp(-x) + 1.0);
  return {args[0].to_tensor() * s * (x * (1.0 - s) + 1.0)};
}

std::vector<Tensor> sigmoid_backward_decomposition(const Stack& args) {
  const Tensor& y = args[1].to_tensor();
  return {args[0].to_tensor() * (1.0 - y) * y};
}

std::vector<Tensor> tanh_backward_decomposition(const Stack& args) {
  const Tensor& y = args[1].to_tensor();
  return {args[0].to_tensor() * (1.0 - y * y)};
}

std::vector<Tensor> leaky_relu_backward_decomposition(const Stack& args) {
  const Tensor& g = args[0].to_tensor();
  return {where(args[1].to_tensor() > 0.0, g, g * args[2].to_scalar())};
}

std::vector<Tensor> elu_backward_decomposition(const Stack& args) {
  const Tensor& g = args[0].to_tensor();
  const double alpha = args[1].to_scalar().to<double>();
  const double scale = args[2].to_scalar().to<double>();
  const double input_scale = args[3].to_scalar().to<double>();
  const Tensor& x = args[5].to_tensor();
  const Tensor below = args[4].to_bool() ? g * input_scale * (x + alpha * scale)
                                         : g * input_scale * (alpha * scale) * exp(x * input_scale);
  return {where(x <= 0.0, below, g * scale)};
}

std::vector<Tensor> softplus_backward_decomposition(const Stack& args) {
  const Tensor& g = args[0].to_tensor();
  const Tensor bx = args[1].to_tensor() * args[2].to_scalar();
  return {where(bx > args[3].to_scalar(), g, g / (exp(-bx) + 1.0))};
}

// ---- samples ----

// (grad_output, x) pairs of one shape (PyTorch's oneDNN gelu_backward rejects broadcasting; the
// others broadcast as binary ops), x in [low, high).
std::vector<Sample> pair_samples(double low, double high, const Stack& extra, bool with_broadcast) {
  std::vector<Sample> s;
  for (Sample& t : binary_samples(kFloat32, -3.0, 3.0, extra)) {
    if (!with_broadcast &&
        (t.description.find("broadcast") != std::string::npos || t.description == "empty")) {
      continue;
    }
    // x from [-3, 3) to [low, high), keeping its layout.
    t.args[1] = (t.args[1].to_tensor() + 3.0) * ((high - low) / 6.0) + low;
    s.push_back(std::move(t));
  }
  Stack wide{make_sample({2, 37}, kFloat64, -1, 1, 1),
             make_sample({2, 37}, kFloat64, low, high, 2)};
  wide.insert(wide.end(), extra.begin(), extra.end());
  s.push_back({std::move(wide), "float64 SIMD tail"});
  Stack bf16{make_sample({3, 4}, kBFloat16), make_sample({3, 4}, kBFloat16, low, high, 3)};
  bf16.insert(bf16.end(), extra.begin(), extra.end());
  s.push_back({std::move(bf16), "bfloat16"});
  return s;
}

std::vector<Sample> gelu_backward_samples() {
  std::vector<Sample> s = pair_samples(-3.0, 3.0, {"none"}, false);
  for (Sample& t : pair_samples(-8.0, 8.0, {"tanh"}, false)) s.push_back(std::move(t));
  s.push_back({{make_sample({0, 4}, kFloat32), make_sample({0, 4}, kFloat32), "tanh"}, "empty"});
  s.push_back(
      {{make_sample({300}, kFloat32, -1, 1, 5), make_sample({300}, kFloat32, -8, 8, 6), "none"},
       "wide range crossing SIMD width"});
  s.push_back({{make_sample({3, 4}, kFloat32), make_sample({3, 4}, kFloat32), "sigmoid"},
               "bad approximate"});
  return s;
}

std::vector<Sample> threshold_backward_samples() {
  std::vector<Sample> s = pair_samples(-3.0, 3.0, {Scalar(0.0)}, true);
  for (Sample& t : pair_samples(-3.0, 3.0, {Scalar(0.5)}, true)) s.push_back(std::move(t));
  s.push_back({{make_sample({3, 4}, kInt64, -5, 5), make_sample({3, 4}, kInt64, -5, 5, 2),
                Scalar(int64_t{1})},
               "int64"});
  return s;
}

std::vector<Sample> elu_backward_samples() {
  std::vector<Sample> s;
  for (bool is_result : {false, true}) {
    for (const Sample& p : pair_samples(-3.0, 3.0, {}, true)) {
      // (grad_output, alpha, scale, input_scale, is_result, self_or_result)
      s.push_back({{p.args[0], Scalar(1.5), Scalar(2.0), Scalar(0.5), is_result, p.args[1]},
                   p.description + (is_result ? ", from the result" : "")});
    }
  }
  return s;
}

std::vector<Sample> hardtanh_backward_samples() {
  std::vector<Sample> s = pair_samples(-3.0, 3.0, {Scalar(-1.0), Scalar(1.0)}, true);
  for (Sample& t : pair_samples(-3.0, 9.0, {Scalar(0.0), Scalar(6.0)}, true)) {
    s.push_back(std::move(t));
  }
  s.push_back({{make_sample({3, 4}, kInt64, -5, 5), make_sample({3, 4}, kInt64, -5, 5, 2),
                Scalar(int64_t{-2}), Scalar(int64_t{3})},
               "int64 (not supported, as in PyTorch)"});
  return s;
}

}  // namespace

KILN_REGISTER_OPS(activation_backward_ops) {
  const BackwardDecl decls[] = {
      {"gelu_backward(Tensor grad_output, Tensor self, *, str approximate='none') -> Tensor",
       "gelu_backward", true, gelu_call, gelu_backward_decomposition, gelu_backward_samples},
      {"threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor",
       "threshold_backward", false,
       [](const Stack& a) {
         return BackwardCall{ActivationBackward::Threshold, {a[2].to_scalar().to<double>()}};
       },
       threshold_backward_decomposition, threshold_backward_samples},
      {"hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> "
       "Tensor",
       "hardtanh_backward", true,
       [](const Stack& a) {
         return BackwardCall{ActivationBackward::Hardtanh,
                             {a[2].to_scalar().to<double>(), a[3].to_scalar().to<double>()}};
       },
       hardtanh_backward_decomposition, hardtanh_backward_samples},
      {"silu_backward(Tensor grad_output, Tensor self) -> Tensor", "silu_backward", true,
       [](const Stack&) { return BackwardCall{ActivationBackward::Silu}; },
       silu_backward_decomposition, [] { return pair_samples(-6.0, 6.0, {}, true); }},
      // From the forward's result: y in (0, 1) for sigmoid, (-1, 1) for tanh.
      {"sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor", "sigmoid_backward", true,
       [](const Stack&) { return BackwardCall{ActivationBackward::Sigmoid}; },
       sigmoid_backward_decomposition, [] { return pair_samples(0.0, 1.0, {}, true); }},
      {"tanh_backward(Tensor grad_output, Tensor output) -> Tensor", "tanh_backward", true,
       [](const Stack&) { return BackwardCall{ActivationBackward::Tanh}; },
       tanh_backward_decomposition, [] { return pair_samples(-1.0, 1.0, {}, true); }},
  };
  for (const BackwardDecl& d : decls) declare_backward(d);
  declare_backward(
      {"leaky_relu_backward(Tensor grad_output, Tensor self, Scalar negative_slope, bool "
       "self_is_result) -> Tensor",
       "leaky_relu_backward", true,
       [](const Stack& a) {
         return BackwardCall{ActivationBackward::LeakyRelu, {a[2].to_scalar().to<double>()}};
       },
       leaky_relu_backward_decomposition,
       [] {
         std::vector<Sample> s = pair_samples(-3.0, 3.0, {Scalar(0.01), false}, true);
         for (Sample& t : pair_samples(-3.0, 3.0, {Scalar(0.2), true}, true)) {
           s.push_back(std::move(t));
         }
         return s;
       }});
  declare_backward(
      {"elu_backward(Tensor grad_output, Scalar alpha, Scalar scale, Scalar "
       "input_scale, bool is_result, Tensor self_or_result) -> Tensor",
       "elu_backward", true,
       [](const Stack& a) {
         return BackwardCall{ActivationBackward::Elu,
                             {a[1].to_scalar().to<double>(), a[2].to_scalar().to<double>(),
                              a[3].to_scalar().to<double>(), a[4].to_bool()}};
       },
       elu_backward_decomposition, elu_backward_samples, 5});
  declare_backward(
      {"softplus_backward(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold) -> "
       "Tensor",
       "softplus_backward", true,
       [](const Stack& a) {
         return BackwardCall{ActivationBackward::Softplus,
                             {a[2].to_scalar().to<double>(), a[3].to_scalar().to<double>()}};
       },
       softplus_backward_decomposition,
       [] {
         // A threshold off the bfloat16 sample's grid: the formula jumps (by ~1e-9) at it.
         std::vector<Sample> s = pair_samples(-30.0, 30.0, {Scalar(1.0), Scalar(19.9)}, true);
         for (Sample& t : pair_samples(-3.0, 3.0, {Scalar(2.0), Scalar(3.0)}, true)) {
           s.push_back(std::move(t));
         }
         return s;
       }});
}

}  // namespace kiln::ops
