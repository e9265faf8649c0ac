// Three-operand elementwise ops: where, clamp (Scalar and Tensor bounds), clamp_min/max, lerp,
// addcmul, addcdiv.
#include "ops/binary/binary_samples.h"
#include "ops/binary/elementwise_common.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/unary.h>

#include <cmath>

namespace kiln::ops {
namespace {

// A ternary op's call, as BinaryPlan is for binary ones. An undefined `c` makes it the binary
// op `binary_kind` on (a, b) instead (clamp with one Tensor bound).
struct TernaryPlan {
  TernaryOp kind;
  Tensor a, b, c;
  DType compute;
  DType result;
  Scalar alpha = 1;
  std::optional<BinaryOp> binary_kind;
};
using TernaryPlanFn = TernaryPlan (*)(const Stack& args);

// A ternary op's decomposition, given its plan (the checks have run, dtypes are resolved).
using TernaryDecompositionFn = Tensor (*)(const Stack& args, const TernaryPlan& plan);

void declare_ternary(const char* schema, const char* name, TernaryPlanFn plan, bool inplace,
                     bool out, SampleFn samples, DerivativeFn derivative,
                     DerivativeReads reads = DerivativeReads::Inputs,
                     TernaryDecompositionFn decomposition = nullptr) {
  OpBuilder b(schema);
  if (decomposition) {
    std::move(b).decomposition([plan, decomposition](const Stack& args) {
      return std::vector<Tensor>{decomposition(args, plan(args))};
    });
  }
  std::move(b)
      .meta([plan, name](const Stack& args) {
        TernaryPlan p = plan(args);
        return std::vector<TensorMeta>{elementwise_meta({p.a, p.b, p.c}, p.result, name)};
      })
      .cpu([plan, name](const Stack& args, const std::vector<Tensor>& outs) {
        TernaryPlan p = plan(args);
        if (outs[0].numel() == 0) return;
        if (p.binary_kind) {
          run_binary({*p.binary_kind, p.a, p.b, p.compute, p.result, p.alpha}, outs[0], name);
          return;
        }
        auto iter = elementwise_iter(outs[0], {p.a, p.b, p.c}, p.compute, p.compute, name);
        ternary_kernels(iter, p.kind, p.alpha);
      })
      .samples(std::move(samples))
      .derivative(std::move(derivative), reads);
  if (inplace) std::move(b).inplace_variant();
  if (out) std::move(b).out_variant();
  declare(std::move(b));
}

// ---- where ----

TernaryPlan where_plan(const Stack& args) {
  const Tensor& cond = args[0].to_tensor();
  const Tensor& self = args[1].to_tensor();
  const Tensor& other = args[2].to_tensor();
  KILN_CHECK_T(TypeError, cond.dtype() == DType::Bool,
               "where expected condition to be a boolean tensor, but got a tensor with dtype {}",
               dtype_name(cond.dtype()));
  DType d = result_type(self, other);
  return {TernaryOp::Where, cond, self, other, d, d, 1, std::nullopt};
}

// ---- clamp ----

void check_clamp_dtype(DType d) {
  if (d == DType::Bool) unsupported("clamp", d);
}

// PyTorch's clamp(Scalar) promotion: a floating self keeps its dtype; otherwise the bounds
// take part as Python numbers.
DType clamp_scalar_dtype(const Tensor& self, const std::optional<Scalar>& lo,
                         const std::optional<Scalar>& hi) {
  DType d = self.dtype();
  if (!is_floating_point(d)) {
    std::vector<Tensor> all{self};
    if (lo) all.push_back(wrapped_scalar(*lo, Device::meta()));
    if (hi) all.push_back(wrapped_scalar(*hi, Device::meta()));
    d = result_type(all);
  }
  check_clamp_dtype(d);
  return d;
}

struct ClampArgs {
  Tensor self;
  std::optional<Scalar> lo, hi;
  DType dtype;
};
ClampArgs clamp_args(const Stack& args, bool has_min, bool has_max) {
  ClampArgs c;
  c.self = args[0].to_tensor();
  size_t i = 1;
  if (has_min) c.lo = args[i++].to_optional_scalar();
  if (has_max) c.hi = args[i].to_optional_scalar();
  KILN_CHECK(c.lo || c.hi, "torch.clamp: At least one of 'min' or 'max' must not be None");
  c.dtype = clamp_scalar_dtype(c.self, c.lo, c.hi);
  return c;
}

// Scalar bounds: the gradient passes where min <= self <= max (bounds included), as PyTorch.
std::vector<Tensor> clamp_scalar_derivative(const BackwardArgs& a, bool has_min, bool has_max) {
  const Tensor& self = a.inputs[0].to_tensor();
  size_t i = 1;
  const std::optional<Scalar> lo = has_min ? a.inputs[i++].to_optional_scalar() : std::nullopt;
  const std::optional<Scalar> hi = has_max ? a.inputs[i].to_optional_scalar() : std::nullopt;
  Tensor inside;
  if (lo) inside = self >= *lo;
  if (hi) inside = inside.defined() ? inside & (self <= *hi) : self <= *hi;
  return {where(inside, a.grad_outputs[0], 0.0)};
}

// clamp as the kernels compute it: max(x, lo), then min(., hi); NaN (in x or a bound)
// propagates, and hi wins when lo > hi.
Tensor clamp_decomposition(const Tensor& x, const std::optional<Scalar>& lo,
                           const std::optional<Scalar>& hi) {
  Tensor r = x;
  if (lo) r = maximum(r, *lo);
  if (hi) r = minimum(r, *hi);
  return r;
}

void declare_clamp_scalar(const char* schema, const char* name, bool has_min, bool has_max,
                          SampleFn samples) {
  OpBuilder b(schema);
  std::move(b)
      .meta([=](const Stack& args) {
        ClampArgs c = clamp_args(args, has_min, has_max);
        return std::vector<TensorMeta>{elementwise_meta({c.self}, c.dtype, name)};
      })
      .cpu([=](const Stack& args, const std::vector<Tensor>& outs) {
        ClampArgs c = clamp_args(args, has_min, has_max);
        if (outs[0].numel() == 0) return;
        auto iter = elementwise_iter(outs[0], {c.self}, c.dtype, c.dtype, name);
        clamp_scalar_kernels(iter, c.lo, c.hi);
      })
      .samples(std::move(samples))
      .derivative(
          [=](const BackwardArgs& a) { return clamp_scalar_derivative(a, has_min, has_max); })
      .decomposition([=](const Stack& args) {
        const ClampArgs c = clamp_args(args, has_min, has_max);
        return std::vector<Tensor>{clamp_decomposition(c.self.to(c.dtype), c.lo, c.hi)};
      })
      .inplace_variant()
      .out_variant();
  declare(std::move(b));
}

TernaryPlan clamp_tensor_plan(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  Tensor lo = args[1].to_optional_tensor(), hi = args[2].to_optional_tensor();
  KILN_CHECK(lo.defined() || hi.defined(),
             "torch.clamp: At least one of 'min' or 'max' must not be None");
  DType d = result_type(std::vector<Tensor>{self, lo, hi});
  check_clamp_dtype(d);
  if (!hi.defined()) return {TernaryOp::Clamp, self, lo, {}, d, d, 1, BinaryOp::Maximum};
  if (!lo.defined()) return {TernaryOp::Clamp, self, hi, {}, d, d, 1, BinaryOp::Minimum};
  return {TernaryOp::Clamp, self, lo, hi, d, d, 1, std::nullopt};
}

template <BinaryOp kind>
TernaryPlan clamp_bound_plan(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const Tensor& bound = args[1].to_tensor();
  DType d = result_type(self, bound);
  check_clamp_dtype(d);
  return {TernaryOp::Clamp, self, bound, {}, d, d, 1, kind};
}

// ---- lerp ----

void check_lerp(const Tensor& self, const Tensor& end, const Tensor* weight) {
  KILN_CHECK_T(TypeError, self.dtype() == end.dtype(),
               "lerp: expected dtype {} for `end` but got dtype {}", dtype_name(self.dtype()),
               dtype_name(end.dtype()));
  if (weight && !weight->impl()->is_wrapped_number()) {
    KILN_CHECK_T(TypeError, self.dtype() == weight->dtype(),
                 "lerp: expected dtype {} for `weight` but got dtype {}", dtype_name(self.dtype()),
                 dtype_name(weight->dtype()));
  }
  if (!is_floating_point(self.dtype())) unsupported("lerp", self.dtype());
}

TernaryPlan lerp_tensor_plan(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const Tensor& end = args[1].to_tensor();
  const Tensor& weight = args[2].to_tensor();
  check_lerp(self, end, &weight);
  return {TernaryOp::Lerp, self, end, weight, self.dtype(), self.dtype(), 1, std::nullopt};
}

TernaryPlan lerp_scalar_plan(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const Tensor& end = args[1].to_tensor();
  check_lerp(self, end, nullptr);
  return {TernaryOp::Lerp,     self,          end, {}, self.dtype(), self.dtype(),
          args[2].to_scalar(), BinaryOp::Lerp};
}

// ---- addcmul, addcdiv ----

TernaryPlan addcmul_plan(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const Tensor& t1 = args[1].to_tensor();
  const Tensor& t2 = args[2].to_tensor();
  DType d = result_type(std::vector<Tensor>{self, t1, t2});
  return {TernaryOp::Addcmul, self, t1, t2, d, d, args[3].to_scalar(), std::nullopt};
}

TernaryPlan addcdiv_plan(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const Tensor& t1 = args[1].to_tensor();
  const Tensor& t2 = args[2].to_tensor();
  KILN_CHECK(!(is_integral(t1.dtype(), true) && is_integral(t2.dtype(), true)),
             "addcdiv: Integer division with addcdiv is no longer supported, and in a future "
             "release addcdiv will perform a true division of tensor1 and tensor2. The historic "
             "addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / "
             "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
             "tensor2) for float inputs. The future addcdiv behavior is just the latter "
             "implementation: (input + value * tensor1 / tensor2), for all dtypes.");
  DType d = result_type(std::vector<Tensor>{self, t1, t2});
  return {TernaryOp::Addcdiv, self, t1, t2, d, d, args[3].to_scalar(), std::nullopt};
}

// ---- decompositions (given the checked plan) ----

DType opmath(DType d) { return d == DType::Float16 || d == DType::BFloat16 ? DType::Float32 : d; }

// clamp.Tensor and clamp_min/clamp_max.Tensor: the bounds that are given, in the result dtype.
Tensor clamp_tensor_decomposition(const Stack& /*args*/, const TernaryPlan& p) {
  const Tensor x = p.a.to(p.result);
  if (!p.binary_kind) return minimum(maximum(x, p.b.to(p.result)), p.c.to(p.result));
  return *p.binary_kind == BinaryOp::Maximum ? maximum(x, p.b.to(p.result))
                                             : minimum(x, p.b.to(p.result));
}

// PyTorch's lerp formula, chosen by |weight| for accuracy at both ends, in the opmath dtype.
Tensor lerp_decomposition(const Stack& args, const TernaryPlan& p) {
  const DType acc = opmath(p.result);
  const Tensor a = p.a.to(acc), b = p.b.to(acc), diff = b - a;
  if (p.binary_kind) {  // lerp.Scalar: the weight as the kernel's opmath value
    const double w = acc == DType::Float32 ? static_cast<double>(args[2].to_scalar().to<float>())
                                           : args[2].to_scalar().to<double>();
    return (std::abs(w) < 0.5 ? a + diff * w : b - diff * (1.0 - w)).to(p.result);
  }
  const Tensor w = p.c.to(acc);
  return where(kiln::abs(w) < 0.5, a + w * diff, b - diff * (1.0 - w)).to(p.result);
}

// self + value * tensor1 * tensor2 (or / tensor2), value as the kernel's opmath value.
Tensor addc_decomposition(const Stack& /*args*/, const TernaryPlan& p) {
  const DType acc = opmath(p.result);
  const Scalar value =
      is_floating_point(acc) ? Scalar(p.alpha.to<double>()) : Scalar(p.alpha.to<int64_t>());
  const Tensor scaled = p.b.to(acc) * value;
  const Tensor t2 = p.c.to(acc);
  const Tensor term = p.kind == TernaryOp::Addcmul ? scaled * t2 : scaled / t2;
  return (p.a.to(acc) + term).to(p.result);
}

// ---- derivatives ----

std::vector<Tensor> where_derivative(const BackwardArgs& a) {
  const Tensor& cond = a.input(0);
  const Tensor& g = a.grad_outputs[0];
  // A Python-number branch (where(c, x, 0.0)) needs no gradient.
  auto branch = [&](size_t i, bool taken) {
    if (a.input(i).impl()->is_wrapped_number()) return Tensor();
    return taken ? where(cond, g, 0.0) : where(cond, 0.0, g);
  };
  return {Tensor(), branch(1, true), branch(2, false)};
}

// PyTorch's clamp_backward_min_max: self gets the gradient where min <= self <= max, min where
// self < min (and min < max), max where self > max or max < min (max wins a crossed pair).
std::vector<Tensor> clamp_tensor_derivative(const BackwardArgs& a) {
  const Tensor& self = a.input(0);
  const Tensor lo = a.inputs[1].to_optional_tensor();
  const Tensor hi = a.inputs[2].to_optional_tensor();
  const Tensor& g = a.grad_outputs[0];
  if (lo.defined() && hi.defined()) {
    return {where((self >= lo) & (self <= hi), g, 0.0), where((self < lo) & (lo < hi), g, 0.0),
            where((self > hi) | (hi < lo), g, 0.0)};
  }
  if (lo.defined()) return {where(self >= lo, g, 0.0), where(self < lo, g, 0.0), Tensor()};
  return {where(self <= hi, g, 0.0), Tensor(), where(self > hi, g, 0.0)};
}

std::vector<Tensor> clamp_min_tensor_derivative(const BackwardArgs& a) {
  const Tensor& self = a.input(0);
  const Tensor& lo = a.input(1);
  const Tensor& g = a.grad_outputs[0];
  return {where(self >= lo, g, 0.0), where(self < lo, g, 0.0)};
}

std::vector<Tensor> clamp_max_tensor_derivative(const BackwardArgs& a) {
  const Tensor& self = a.input(0);
  const Tensor& hi = a.input(1);
  const Tensor& g = a.grad_outputs[0];
  return {where(self <= hi, g, 0.0), where(self > hi, g, 0.0)};
}

std::vector<Tensor> lerp_tensor_derivative(const BackwardArgs& a) {
  const Tensor& g = a.grad_outputs[0];
  const Tensor& weight = a.input(2);
  const Tensor g_end = g * weight;
  // A Python-number weight needs no gradient.
  if (weight.impl()->is_wrapped_number()) return {g - g_end, g_end, Tensor()};
  return {g - g_end, g_end, g * (a.input(1) - a.input(0))};
}

std::vector<Tensor> lerp_scalar_derivative(const BackwardArgs& a) {
  const Tensor& g = a.grad_outputs[0];
  const double w = a.inputs[2].to_scalar().to<double>();
  return {g * (1.0 - w), g * w};
}

std::vector<Tensor> addcmul_derivative(const BackwardArgs& a) {
  const Tensor& g = a.grad_outputs[0];
  const double value = a.inputs[3].to_scalar().to<double>();
  const Tensor gv = value == 1.0 ? g : g * value;
  return {g, gv * a.input(2), gv * a.input(1)};
}

std::vector<Tensor> addcdiv_derivative(const BackwardArgs& a) {
  const Tensor& g = a.grad_outputs[0];
  const double value = a.inputs[3].to_scalar().to<double>();
  const Tensor g_t1 = (value == 1.0 ? g : g * value) / a.input(2);
  return {g, g_t1, -g_t1 * a.input(1) / a.input(2)};
}

// ---- samples ----

// Three float tensors in [low, high) with broadcasting, non-contiguous, 0-dim and empty cases.
std::vector<Sample> ternary_samples(DType dtype, double low, double high, const Stack& extra = {},
                                    double low3 = -3.0, double high3 = 3.0) {
  auto m = [&](IntList s, uint64_t seed, double lo = -3.0, double hi = 3.0) {
    return make_sample(s, dtype, lo, hi, seed);
  };
  std::vector<Sample> s = {
      {{m({4, 5}, 1), m({4, 5}, 2), m({4, 5}, 3, low3, high3)}, "same shape"},
      {{m({300}, 4), m({300}, 5), m({300}, 6, low3, high3)}, "1-D crossing SIMD width"},
      {{m({4, 5}, 7), m({5}, 8), m({4, 1}, 9, low3, high3)}, "broadcast"},
      {{m({3, 4}, 10), m({}, 11), m({}, 12, low3, high3)}, "0-dim"},
      {{make_noncontiguous_sample({3, 6}, dtype, -3, 3, 13), m({6, 3}, 14).t(),
        m({3, 6}, 15, low3, high3)},
       "non-contiguous"},
      {{m({0, 4}, 16), m({4}, 17), m({0, 4}, 18, low3, high3)}, "empty"},
  };
  (void)low;
  (void)high;
  for (auto& x : s) x.args.insert(x.args.end(), extra.begin(), extra.end());
  return s;
}

std::vector<Sample> where_samples() {
  std::vector<Sample> s;
  for (DType d : {kFloat32, kInt64}) {
    s.push_back(
        {{make_sample({4, 5}, kBool, 0, 1, 1), make_sample({4, 5}, d), make_sample({4, 5}, d)},
         "same shape"});
    s.push_back({{make_sample({4, 1}, kBool, 0, 1, 2), make_sample({5}, d), make_sample({4, 5}, d)},
                 "broadcast"});
    s.push_back({{make_sample({3, 4}, kBool, 0, 1, 3), make_sample({3, 4}, d), make_sample({}, d)},
                 "0-dim other"});
    s.push_back(
        {{make_sample({0, 3}, kBool), make_sample({3}, d), make_sample({0, 3}, d)}, "empty"});
  }
  s.push_back({{make_sample({3, 4}, kBool, 0, 1, 4), make_sample({3, 4}, kInt32),
                make_sample({4}, kFloat64)},
               "mixed dtypes"});
  s.push_back({{make_sample({3, 4}, kBool, 0, 1, 5), make_sample({3, 4}, kFloat32),
                wrapped_scalar(Scalar(0.5))},
               "wrapped scalar"});
  return s;
}

std::vector<Sample> clamp_scalar_samples() {
  std::vector<Sample> s;
  for (const auto& u : unary_samples(kFloat32)) {
    s.push_back({{u.args[0], Scalar(-1.0), Scalar(1.5)}, u.description + ", min and max"});
    s.push_back({{u.args[0], std::nullopt, Scalar(0.5)}, u.description + ", max only"});
  }
  s.push_back({{make_sample({3, 4}, kInt64, -5, 5), Scalar(-2), Scalar(3)}, "int64"});
  s.push_back({{make_sample({3, 4}, kInt32, -5, 5), Scalar(0.5), std::nullopt}, "int promoted"});
  return s;
}

std::vector<Sample> one_bound_samples(const Scalar& bound) {
  std::vector<Sample> s;
  for (const auto& u : unary_samples(kFloat32)) s.push_back({{u.args[0], bound}, u.description});
  s.push_back({{make_sample({3, 4}, kInt64, -5, 5), Scalar(1)}, "int64"});
  return s;
}

}  // namespace

KILN_REGISTER_OPS(binary_ternary) {
  declare_ternary("where(Tensor condition, Tensor self, Tensor other) -> Tensor", "where",
                  where_plan, false, true, where_samples, where_derivative);

  declare_clamp_scalar("clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", "clamp",
                       true, true, clamp_scalar_samples);
  declare_clamp_scalar("clamp_min(Tensor self, Scalar min) -> Tensor", "clamp_min", true, false,
                       [] { return one_bound_samples(Scalar(-0.5)); });
  declare_clamp_scalar("clamp_max(Tensor self, Scalar max) -> Tensor", "clamp_max", false, true,
                       [] { return one_bound_samples(Scalar(0.5)); });
  declare_ternary(
      "clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor", "clamp",
      clamp_tensor_plan, true, false,
      [] {
        std::vector<Sample> s = ternary_samples(kFloat32, -3, 3, {}, 0.0, 3.0);
        s.push_back({{make_sample({3, 4}, kFloat32), make_sample({4}, kFloat32), std::nullopt},
                     "min only"});
        s.push_back(
            {{make_sample({3, 4}, kInt64, -5, 5), std::nullopt, make_sample({3, 1}, kInt64, -2, 2)},
             "int64 max only"});
        s.push_back({{make_sample({3, 4}, kFloat64), make_sample({4}, kFloat64, 0.0, 1.0, 3),
                      make_sample({3, 1}, kFloat64, -1.0, 0.0, 4)},
                     "min above max"});
        s.push_back({{make_sample({3, 4}, kFloat64), std::nullopt, make_sample({4}, kFloat64)},
                     "max only"});
        return s;
      },
      clamp_tensor_derivative, DerivativeReads::Inputs, clamp_tensor_decomposition);
  declare_ternary(
      "clamp_min.Tensor(Tensor self, Tensor min) -> Tensor", "clamp_min",
      clamp_bound_plan<BinaryOp::Maximum>, true, false, [] { return binary_samples(kFloat32); },
      clamp_min_tensor_derivative, DerivativeReads::Inputs, clamp_tensor_decomposition);
  declare_ternary(
      "clamp_max.Tensor(Tensor self, Tensor max) -> Tensor", "clamp_max",
      clamp_bound_plan<BinaryOp::Minimum>, true, false, [] { return binary_samples(kFloat32); },
      clamp_max_tensor_derivative, DerivativeReads::Inputs, clamp_tensor_decomposition);

  // aten's lerp.Tensor (the Tensor-weight form carries the unqualified name here).
  declare_ternary(
      "lerp(Tensor self, Tensor end, Tensor weight) -> Tensor", "lerp", lerp_tensor_plan, true,
      true, [] { return ternary_samples(kFloat32, -3, 3, {}, -0.5, 1.5); }, lerp_tensor_derivative,
      DerivativeReads::Inputs, lerp_decomposition);
  declare_ternary(
      "lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor", "lerp", lerp_scalar_plan,
      true, false,
      [] {
        std::vector<Sample> s = binary_samples(kFloat32, -3, 3, {Scalar(0.25)});
        auto more = binary_samples(kFloat64, -3, 3, {Scalar(0.75)});
        s.insert(s.end(), more.begin(), more.end());
        return s;
      },
      lerp_scalar_derivative, DerivativeReads::Nothing, lerp_decomposition);

  declare_ternary(
      "addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> "
      "Tensor",
      "addcmul", addcmul_plan, true, true,
      [] {
        return concat({ternary_samples(kFloat32, -3, 3),
                       ternary_samples(kFloat32, -3, 3, {Scalar(0.5)}),
                       ternary_samples(kInt64, -3, 3, {Scalar(2)})});
      },
      addcmul_derivative, DerivativeReads::Inputs, addc_decomposition);
  declare_ternary(
      "addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> "
      "Tensor",
      "addcdiv", addcdiv_plan, true, true,
      [] {
        return concat({ternary_samples(kFloat32, -3, 3, {}, 1.0, 3.0),
                       ternary_samples(kFloat32, -3, 3, {Scalar(-0.5)}, 1.0, 3.0)});
      },
      addcdiv_derivative, DerivativeReads::Inputs, addc_decomposition);
}

}  // namespace kiln::ops

namespace kiln {
namespace {
using ops::op_named;
}  // namespace

Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other,
             const kiln::SourceLocation& loc) {
  static const auto& o = op_named("where");
  return ops::call1(o, {condition, self, other}, &loc);
}
Tensor where(const Tensor& condition, const Scalar& self, const Tensor& other,
             const kiln::SourceLocation& loc) {
  return where(condition, wrapped_scalar(self, other.device()), other, loc);
}
Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other,
             const kiln::SourceLocation& loc) {
  return where(condition, self, wrapped_scalar(other, self.device()), loc);
}
Tensor where(const Tensor& condition, const Scalar& self, const Scalar& other,
             const kiln::SourceLocation& loc) {
  return where(condition, wrapped_scalar(self, condition.device()),
               wrapped_scalar(other, condition.device()), loc);
}
Tensor clamp(const Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max,
             const kiln::SourceLocation& loc) {
  static const auto& o = op_named("clamp");
  return ops::call1(o, {self, min, max}, &loc);
}
Tensor clamp(const Tensor& self, const Tensor& min, const Tensor& max,
             const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& o = op_named("clamp.Tensor");
  return ops::call1(o,
                    {self, min.defined() ? ops::IValue(min) : ops::IValue(),
                     max.defined() ? ops::IValue(max) : ops::IValue()},
                    &loc);
}
Tensor clamp_min(const Tensor& self, const Scalar& min, const kiln::SourceLocation& loc) {
  static const auto& o = op_named("clamp_min");
  return ops::call1(o, {self, min}, &loc);
}
Tensor clamp_max(const Tensor& self, const Scalar& max, const kiln::SourceLocation& loc) {
  static const auto& o = op_named("clamp_max");
  return ops::call1(o, {self, max}, &loc);
}
Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight,
            const kiln::SourceLocation& loc) {
  static const auto& o = op_named("lerp.Scalar");
  return ops::call1(o, {self, end, weight}, &loc);
}
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight,
            const kiln::SourceLocation& loc) {
  static const auto& o = op_named("lerp");
  return ops::call1(o, {self, end, weight}, &loc);
}
Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
               const Scalar& value, const kiln::SourceLocation& loc) {
  static const auto& o = op_named("addcmul");
  return ops::call1(o, {self, tensor1, tensor2, value}, &loc);
}
Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
               const Scalar& value, const kiln::SourceLocation& loc) {
  static const auto& o = op_named("addcdiv");
  return ops::call1(o, {self, tensor1, tensor2, value}, &loc);
}

}  // namespace kiln
