// Unary ops with parameters: gelu, softplus, hardtanh/relu6, leaky_relu, elu/selu, logit,
// round(decimals) and nan_to_num. Each reads its parameters from the boxed arguments into
// UnaryParams and runs the shared unary kernel.
#include "ops/samples.h"
#include "ops/unary/unary_decompositions.h"
#include "ops/unary/unary_kernels.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/unary.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>

namespace kiln::ops {
namespace {

using R = UnaryDTypeRule;
using U = UnaryOpId;

// selu's constants (Klambauer et al., 2017), as in PyTorch.
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

// How one parameterized op reads its arguments.
struct ParamDecl {
  const char* schema;
  const char* name;
  UnaryDTypeRule rule;
  bool inplace;
  bool out;
  // Checks the arguments and picks the kernel and its parameters.
  std::function<std::pair<UnaryOpId, UnaryParams>(const Stack& args)> params;
  std::function<std::vector<Sample>()> samples;
  DerivativeFn derivative;
  DerivativeReads reads = DerivativeReads::Inputs;
};

// Appends extra arguments to each of the standard float32 samples.
std::vector<Sample> with_args(std::vector<Sample> samples, const Stack& extra) {
  for (Sample& s : samples) s.args.insert(s.args.end(), extra.begin(), extra.end());
  return samples;
}

std::pair<UnaryOpId, UnaryParams> gelu_params(const Stack& args) {
  const std::string& approximate = args[1].to_string();
  KILN_CHECK(approximate == "none" || approximate == "tanh",
             "gelu: approximate must be 'none' or 'tanh', got '{}'", approximate);
  return {approximate == "tanh" ? U::GeluTanh : U::GeluErf, {}};
}

std::pair<UnaryOpId, UnaryParams> hardtanh_params(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  double lo = args[1].to_double(), hi = args[2].to_double();
  KILN_CHECK(self.dtype() != DType::UInt8 || (lo >= 0 && hi >= 0),
             "hardtanh: cannot clamp a uint8 tensor to negative limits (min_val {}, max_val {})",
             lo, hi);
  if (is_integral(self.dtype())) {  // integral limits, as PyTorch converts them
    lo = static_cast<double>(static_cast<int64_t>(lo));
    hi = static_cast<double>(static_cast<int64_t>(hi));
  }
  return {U::Hardtanh, {lo, hi, 0}};
}

// nan_to_num's defaults: 0 for NaN, the dtype's largest and lowest finite values for infinities.
std::pair<UnaryOpId, UnaryParams> nan_to_num_params(const Stack& args) {
  const DType dtype = args[0].to_tensor().dtype();
  double max = 0;
  switch (dtype) {
    case DType::Float16:
      max = static_cast<float>(std::numeric_limits<Half>::max());
      break;
    case DType::BFloat16:
      max = static_cast<float>(std::numeric_limits<BFloat16>::max());
      break;
    case DType::Float32:
      max = FLT_MAX;
      break;
    default:
      max = DBL_MAX;
      break;
  }
  return {U::NanToNum,
          {args[1].to_optional_double().value_or(0.0), args[2].to_optional_double().value_or(max),
           args[3].to_optional_double().value_or(-max)}};
}

// ---- derivatives (x: the input, g: the output's gradient), at PyTorch's conventions ----

const Tensor& input(const BackwardArgs& a) { return a.inputs[0].to_tensor(); }

// The fused gelu_backward op (activation_backward_ops.cpp).
std::vector<Tensor> gelu_derivative(const BackwardArgs& a) {
  static const OpDef& backward = OpRegistry::instance().get("gelu_backward");
  return {call1(backward, {a.grad_outputs[0], input(a), a.inputs[1]})};
}

// The fused softplus_backward: g * sigmoid(beta x), and g where beta x > threshold (the forward
// is x there).
std::vector<Tensor> softplus_derivative(const BackwardArgs& a) {
  static const OpDef& backward = OpRegistry::instance().get("softplus_backward");
  return {call1(backward, {a.grad_outputs[0], input(a), a.inputs[1], a.inputs[2]})};
}

// The fused hardtanh_backward: no gradient at or beyond the limits (relu6 is hardtanh(0, 6)).
std::vector<Tensor> hardtanh_derivative(const BackwardArgs& a) {
  const Tensor& x = input(a);
  const bool relu6 = a.inputs.size() == 1;
  const double lo = relu6 ? 0.0 : a.inputs[1].to_double();
  const double hi = relu6 ? 6.0 : a.inputs[2].to_double();
  static const OpDef& backward = OpRegistry::instance().get("hardtanh_backward");
  return {call1(backward, {a.grad_outputs[0], x, Scalar(lo), Scalar(hi)})};
}

// The fused leaky_relu_backward: g where x > 0, else g * negative_slope.
std::vector<Tensor> leaky_relu_derivative(const BackwardArgs& a) {
  static const OpDef& backward = OpRegistry::instance().get("leaky_relu_backward");
  return {call1(backward, {a.grad_outputs[0], input(a), a.inputs[1], false})};
}

// The fused elu_backward (from the input): scale where x > 0, else
// input_scale * alpha * scale * exp(input_scale x). selu is elu with fixed constants.
std::vector<Tensor> elu_derivative(const BackwardArgs& a) {
  static const OpDef& backward = OpRegistry::instance().get("elu_backward");
  const bool selu = a.inputs.size() == 1;
  const Scalar alpha = selu ? Scalar(kSeluAlpha) : a.inputs[1].to_scalar();
  const Scalar scale = selu ? Scalar(kSeluScale) : a.inputs[2].to_scalar();
  const Scalar input_scale = selu ? Scalar(1.0) : a.inputs[3].to_scalar();
  return {call1(backward, {a.grad_outputs[0], alpha, scale, input_scale, false, input(a)})};
}

// g / (x (1 - x)); outside [0, 1] NaN without eps, and 0 outside [eps, 1 - eps] with it (where
// the forward clamps), as PyTorch's logit_backward.
std::vector<Tensor> logit_derivative(const BackwardArgs& a) {
  const Tensor& x = input(a);
  const std::optional<double> eps = a.inputs[1].to_optional_double();
  const Tensor grad = a.grad_outputs[0] / (x * (1.0 - x));
  if (!eps) return {where((x < 0.0) | (x > 1.0), std::nan(""), grad)};
  return {where((x < *eps) | (x > 1.0 - *eps), 0.0, grad)};
}

std::vector<Tensor> zero_derivative(const BackwardArgs& a) {
  return {zeros_like(a.grad_outputs[0])};
}

// Replaced values (NaN, infinities) are constants.
std::vector<Tensor> nan_to_num_derivative(const BackwardArgs& a) {
  return {a.grad_outputs[0] * isfinite(input(a))};
}

std::vector<ParamDecl> param_decls() {
  auto fixed = [](UnaryOpId id, UnaryParams p) {
    return [id, p](const Stack&) { return std::pair{id, p}; };
  };
  return {
      {"gelu(Tensor self, *, str approximate='none') -> Tensor", "gelu", R::FloatOnly, true, true,
       gelu_params,
       [] {
         auto s = with_args(unary_samples(kFloat32), {"none"});
         auto t = with_args(unary_samples(kFloat32), {"tanh"});
         s.insert(s.end(), t.begin(), t.end());
         return s;
       },
       gelu_derivative},
      {"softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor", "softplus",
       R::FloatOnly, false, true,
       [](const Stack& a) {
         return std::pair{U::Softplus, UnaryParams{a[1].to_double(), a[2].to_double(), 0}};
       },
       [] {
         auto s = unary_samples(kFloat32, -30, 30);
         auto t = with_args(unary_samples(kFloat32), {Scalar(2.0), Scalar(3.0)});
         s.insert(s.end(), t.begin(), t.end());
         return s;
       },
       softplus_derivative},
      {"hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor", "hardtanh",
       R::KeepNoBool, true, true, hardtanh_params,
       [] {
         auto s = unary_samples(kFloat32);
         auto t = with_args(unary_samples(kFloat32), {Scalar(-0.5), Scalar(2.0)});
         s.insert(s.end(), t.begin(), t.end());
         s.push_back({{make_sample({3, 4}, kInt64, -5, 5), Scalar(int64_t{-2}), Scalar(int64_t{3})},
                      "int64"});
         return s;
       },
       hardtanh_derivative},
      {"relu6(Tensor self) -> Tensor", "relu6", R::KeepNoBool, true, false,
       fixed(U::Hardtanh, {0.0, 6.0, 0}),
       [] {
         auto s = unary_samples(kFloat32, -3, 9);
         s.push_back({{make_sample({3, 4}, kInt64, -5, 10)}, "int64"});
         return s;
       },
       hardtanh_derivative},
      {"leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor", "leaky_relu", R::FloatOnly,
       true, true,
       [](const Stack& a) {
         return std::pair{U::LeakyRelu, UnaryParams{a[1].to_double(), 0, 0}};
       },
       [] {
         auto s = unary_samples(kFloat32);
         auto t = with_args(unary_samples(kFloat32), {Scalar(0.2)});
         s.insert(s.end(), t.begin(), t.end());
         return s;
       },
       leaky_relu_derivative},
      {"elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor", "elu",
       R::FloatOnly, true, true,
       [](const Stack& a) {
         return std::pair{U::Elu,
                          UnaryParams{a[1].to_double(), a[2].to_double(), a[3].to_double()}};
       },
       [] {
         auto s = unary_samples(kFloat32);
         auto t = with_args(unary_samples(kFloat32), {Scalar(0.5), Scalar(2.0), Scalar(1.5)});
         s.insert(s.end(), t.begin(), t.end());
         return s;
       },
       elu_derivative},
      {"selu(Tensor self) -> Tensor", "selu", R::FloatOnly, true, false,
       fixed(U::Elu, {kSeluAlpha, kSeluScale, 1.0}), [] { return unary_samples(kFloat32); },
       elu_derivative},
      {"logit(Tensor self, float? eps=None) -> Tensor", "logit", R::FloatPromote, true, true,
       [](const Stack& a) {
         return std::pair{U::Logit, UnaryParams{a[1].to_optional_double().value_or(-1.0), 0, 0}};
       },
       [] {
         auto s = unary_samples(kFloat32, 0.05, 0.95);
         auto t = with_args(unary_samples(kFloat32, -0.5, 1.5), {0.1});
         s.insert(s.end(), t.begin(), t.end());
         s.push_back({{make_sample({3, 4}, kInt64, 0, 2)}, "int64"});
         return s;
       },
       logit_derivative},
      {"round.decimals(Tensor self, *, int decimals) -> Tensor", "round", R::FloatOnly, true, true,
       [](const Stack& a) {
         return std::pair{U::RoundDecimals, UnaryParams{static_cast<double>(a[1].to_int()), 0, 0}};
       },
       [] {
         auto s = with_args(unary_samples(kFloat32, -100, 100), {int64_t{2}});
         auto t = with_args(unary_samples(kFloat32, -1000, 1000), {int64_t{-1}});
         s.insert(s.end(), t.begin(), t.end());
         return s;
       },
       zero_derivative, DerivativeReads::Nothing},
      {"nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> "
       "Tensor",
       "nan_to_num", R::Keep, true, true, nan_to_num_params,
       [] {
         const float values[] = {NAN, INFINITY, -INFINITY, 1.5f, -0.0f, 3e38f};
         Tensor special = empty({6}, kFloat32);
         std::copy(std::begin(values), std::end(values), static_cast<float*>(special.data_ptr()));
         std::vector<Sample> s = unary_samples(kFloat32);
         s.push_back({{special}, "specials, default replacements"});
         s.push_back({{special, 1.0, 2.0, -3.0}, "specials, given replacements"});
         s.push_back({{special.to(kFloat64), std::nullopt, 7.0}, "float64, posinf only"});
         s.push_back({{make_sample({3, 4}, kInt64)}, "int64"});
         return s;
       },
       nan_to_num_derivative},
  };
}

}  // namespace

KILN_REGISTER_OPS(activation_ops) {
  for (const ParamDecl& d : param_decls()) {
    OpBuilder b(d.schema);
    const char* name = d.name;
    const UnaryDTypeRule rule = d.rule;
    auto params = d.params;
    std::move(b)
        .meta([name, rule, params](const Stack& args) {
          params(args);  // argument checks, so that meta tensors raise too
          return unary_meta(args[0].to_tensor(), rule, name);
        })
        .cpu([name, rule, params](const Stack& args, const std::vector<Tensor>& out) {
          auto [id, p] = params(args);
          run_unary(out[0], args[0].to_tensor(), rule, id, p, name);
        })
        .decomposition([name, rule, params](const Stack& args) {
          auto [id, p] = params(args);
          const Tensor& self = args[0].to_tensor();
          const DType result = unary_result_dtype(self.dtype(), rule, name);
          return std::vector<Tensor>{unary_decomposition(self, id, p, result)};
        })
        .samples(d.samples)
        .derivative(d.derivative, d.reads);
    if (d.inplace) std::move(b).inplace_variant();
    if (d.out) std::move(b).out_variant();
    declare(std::move(b));
  }
}

}  // namespace kiln::ops

namespace kiln {

namespace {
template <typename... Args>
Tensor call_op(const ops::OpDef& op, Args&&... args) {
  return ops::call1(op, {ops::IValue(std::forward<Args>(args))...});
}
using ops::op_named;
}  // namespace

Tensor round(const Tensor& self, int64_t decimals, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& plain = op_named("round");
  static const auto& with_decimals = op_named("round.decimals");
  return decimals == 0 ? call_op(plain, self) : call_op(with_decimals, self, decimals);
}

Tensor logit(const Tensor& self, std::optional<double> eps, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("logit");
  return call_op(op, self, eps);
}

Tensor gelu(const Tensor& self, std::string_view approximate, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("gelu");
  return call_op(op, self, approximate);
}

Tensor softplus(const Tensor& self, double beta, double threshold,
                const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("softplus");
  return call_op(op, self, Scalar(beta), Scalar(threshold));
}

Tensor hardtanh(const Tensor& self, double min_val, double max_val,
                const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("hardtanh");
  return call_op(op, self, Scalar(min_val), Scalar(max_val));
}

Tensor leaky_relu(const Tensor& self, double negative_slope, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("leaky_relu");
  return call_op(op, self, Scalar(negative_slope));
}

Tensor elu(const Tensor& self, double alpha, double scale, double input_scale,
           const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("elu");
  return call_op(op, self, Scalar(alpha), Scalar(scale), Scalar(input_scale));
}

Tensor nan_to_num(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("nan_to_num");
  return call_op(op, self, nan, posinf, neginf);
}

}  // namespace kiln
