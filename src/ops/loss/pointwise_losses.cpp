// Elementwise losses with a reduction: mse_loss, smooth_l1_loss, huber_loss and
// binary_cross_entropy (structured, kernels in loss.kernel.cpp), and l1_loss,
// binary_cross_entropy_with_logits and kl_div (composites, as in aten).
#include "ops/loss/loss_common.h"
#include "ops/loss/loss_kernels.h"
#include "ops/samples.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/reduction.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/sym_size_ops.h>
#include <kiln/ops/unary.h>

#include <fmt/format.h>

namespace kiln::ops {

cpu::KernelDispatch<PointwiseLossKernel> pointwise_loss_kernels;

namespace {

using Metas = std::vector<TensorMeta>;
using Outs = std::vector<Tensor>;

DType compute_dtype_for(DType d) { return d == DType::Float64 ? DType::Float64 : DType::Float32; }

void check_floating(DType d, const char* op) {
  KILN_CHECK_T(TypeError, is_floating_point(d), "{}: expected floating point inputs, got {}", op,
               dtype_name(d));
}

// Output of a loss over broadcast (input, target): the broadcast shape for reduction none, else
// a 0-dim tensor.
TensorMeta loss_meta(SymIntList shape, DType dtype, Device device, Reduction r) {
  return TensorMeta::contiguous(r == Reduction::None ? shape.vec() : SymDimVector{}, dtype, device);
}

// elementwise(input, target) into `out` (the broadcast shape), computing in float32/float64.
void run_pointwise(const Tensor& out, const Tensor& input, const Tensor& target, PointwiseLoss kind,
                   double param, const char* op) {
  if (out.numel() == 0) return;
  auto iter = TensorIteratorConfig()
                  .add_output(out)
                  .add_input(input)
                  .add_input(target)
                  .compute_dtype(compute_dtype_for(out.dtype()))
                  .op_name(op)
                  .build();
  pointwise_loss_kernels(iter, kind, param);
}

// The elementwise loss, reduced into out[0] unless reduction is none; `weight`, when defined,
// multiplies each element first.
void reduce_pointwise(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction r,
                      PointwiseLoss kind, double param, const Outs& out, const char* op) {
  if (r == Reduction::None && !weight.defined()) {
    run_pointwise(out[0], input, target, kind, param, op);
    return;
  }
  Tensor loss =
      empty(broadcast_shapes(input.sizes(), target.sizes(), op), compute_dtype_for(out[0].dtype()));
  run_pointwise(loss, input, target, kind, param, op);
  if (weight.defined()) loss.mul_(weight);
  Tensor dst = out[0];
  dst.copy_(apply_loss_reduction(loss, r));
}

// mse_loss, smooth_l1_loss, huber_loss: (self, target, reduction[, param]) with broadcasting.
struct PointwiseLossOp {
  const char* schema;
  const char* name;
  PointwiseLoss kind;
  bool has_param;
};

Metas broadcast_loss_meta(const Stack& a, const char* op) {
  const Tensor& self = a[0].to_tensor();
  const Tensor& target = a[1].to_tensor();
  // huber_loss writes in the input's dtype; the others promote like a binary op.
  const DType dtype =
      std::string_view(op) == "huber_loss" ? self.dtype() : result_type(self, target);
  check_floating(dtype, op);
  return {loss_meta(broadcast_sym_shapes(self.sym_sizes(), target.sym_sizes(), op), dtype,
                    self.device(), reduction_arg(a[2], op))};
}

std::vector<Sample> regression_samples(const Stack& extra) {
  std::vector<Sample> s;
  auto add = [&](Stack args, std::string what) {
    for (const IValue& v : extra) args.push_back(v);
    s.push_back({std::move(args), std::move(what)});
  };
  for (int64_t r = 0; r <= 2; ++r) {
    add({make_sample({3, 4}, kFloat32), make_sample({3, 4}, kFloat32, -3.0, 3.0, 1), r},
        "same shape");
    add({make_sample({3, 4}, kFloat32), make_sample({4}, kFloat32, -3.0, 3.0, 1), r},
        "broadcast target");
    add({make_sample({2, 37}, kFloat64), make_sample({2, 37}, kFloat64, -3.0, 3.0, 1), r},
        "float64 SIMD tail");
    add({make_sample({0, 3}, kFloat32), make_sample({0, 3}, kFloat32), r}, "empty");
  }
  add({make_noncontiguous_sample({4, 5}, kFloat32), make_sample({4, 5}, kFloat32, -3, 3, 1),
       int64_t{0}},
      "non-contiguous");
  add({make_sample({}, kFloat32), make_sample({}, kFloat32, -3.0, 3.0, 1), int64_t{1}}, "0-dim");
  add({make_sample({3, 4}, kFloat32), make_sample({3, 4}, kFloat64, -3.0, 3.0, 1), int64_t{0}},
      "type promotion");
  add({make_sample({3, 4}, kBFloat16), make_sample({3, 4}, kBFloat16, -3.0, 3.0, 1), int64_t{1}},
      "bfloat16");
  add({make_sample({3, 4}, kFloat32), make_sample({5}, kFloat32), int64_t{1}}, "bad broadcast");
  return s;
}

// Probabilities in (0, 1) with values close to both ends. Not at them: the gradcheck's central
// differences would step outside [0, 1], where the op raises. The log clamp at exactly 0 and 1 is
// tested in tests/autograd/test_derivatives_pointwise.cpp.
Tensor probabilities(IntList sizes, DType dtype, uint64_t seed) {
  Tensor p = make_sample(sizes, dtype, 0.0, 1.0, seed);
  if (p.numel() >= 2) {
    Tensor flat = p.view({-1});
    flat.select(0, 0).fill_(1e-3);
    flat.select(0, 1).fill_(1.0 - 1e-3);
  }
  return p;
}

std::vector<Sample> bce_samples() {
  std::vector<Sample> s;
  for (int64_t r = 0; r <= 2; ++r) {
    s.push_back(
        {{probabilities({3, 4}, kFloat32, 0), make_sample({3, 4}, kFloat32, 0, 1, 1), IValue(), r},
         "near 0 and 1"});
    s.push_back({{probabilities({3, 4}, kFloat64, 0), make_sample({3, 4}, kFloat64, 0, 1, 1),
                  make_sample({4}, kFloat64, 0.5, 2.0, 2), r},
                 "weight"});
  }
  s.push_back({{probabilities({0}, kFloat32, 0), make_sample({0}, kFloat32, 0, 1, 1)}, "empty"});
  s.push_back({{make_sample({}, kFloat32, 0, 1, 0), make_sample({}, kFloat32, 0, 1, 1)}, "0-dim"});
  s.push_back(
      {{make_noncontiguous_sample({4, 5}, kFloat32, 0.01, 0.99),
        make_sample({4, 5}, kFloat32, 0, 1, 1), make_sample({4, 5}, kFloat32, 0, 1, 3), int64_t{0}},
       "non-contiguous"});
  s.push_back({{make_sample({3, 4}, kFloat32, 0.5, 1.5), make_sample({3, 4}, kFloat32, 0, 1, 1)},
               "input above 1"});
  return s;
}

std::vector<Sample> bce_logits_samples() {
  std::vector<Sample> s;
  const Tensor x = make_sample({3, 4}, kFloat32, -5.0, 5.0);
  const Tensor t = make_sample({3, 4}, kFloat32, 0.0, 1.0, 1);
  const Tensor w = make_sample({3, 4}, kFloat32, 0.5, 2.0, 2);
  const Tensor pw = make_sample({4}, kFloat32, 0.5, 3.0, 3);
  for (int64_t r = 0; r <= 2; ++r) {
    s.push_back({{x, t, IValue(), IValue(), r}, "plain"});
    s.push_back({{x, t, w, pw, r}, "weight, pos_weight"});
  }
  s.push_back({{tensor({-100.0, 100.0, -1000.0, 1000.0, 0.0}, kFloat64),
                tensor({1.0, 0.0, 0.0, 1.0, 0.5}, kFloat64)},
               "large logits"});
  s.push_back({{x, t, IValue(), pw}, "pos_weight only"});
  s.push_back({{make_sample({0, 4}, kFloat32), make_sample({0, 4}, kFloat32)}, "empty"});
  s.push_back({{make_noncontiguous_sample({4, 5}, kFloat64), make_sample({4, 5}, kFloat64, 0, 1),
                IValue(), IValue(), int64_t{0}},
               "non-contiguous"});
  return s;
}

std::vector<Sample> kl_div_samples() {
  std::vector<Sample> s;
  const Tensor input = make_sample({3, 4}, kFloat32, -4.0, 0.0);
  Tensor target = make_sample({3, 4}, kFloat32, 0.0, 1.0, 1);
  target.view({-1}).select(0, 0).fill_(0.0);  // xlogy(0, 0) = 0
  for (int64_t r = 0; r <= 2; ++r) {
    s.push_back({{input, target, r}, "probabilities"});
    s.push_back({{input, make_sample({3, 4}, kFloat32, -4.0, 0.0, 1), r, true}, "log_target"});
  }
  s.push_back({{input, make_sample({4}, kFloat64, 0.0, 1.0, 1)}, "broadcast, promotion"});
  s.push_back({{make_sample({0, 4}, kFloat32), make_sample({0, 4}, kFloat32, 0.0, 1.0)}, "empty"});
  return s;
}

// ---- decompositions ----

// The mean's division by the number of elements of `of`: the forward divides (NaN for none);
// the gradient multiplies by the reciprocal (0 for none), as the kernels do. A symbolic count
// divides by a tensor counting the elements (a sum of ones), which a graph can record.
Tensor over_numel(const Tensor& x, const Tensor& of, bool gradient) {
  const SymInt n = of.sym_numel();
  if (n.is_symbolic()) return x / numel_tensor(of, TensorOptions(x.dtype()));
  const auto count = static_cast<double>(n.raw());
  if (!gradient) return x / count;
  return x * (count == 0.0 ? 0.0 : 1.0 / count);
}

// The loss's reduction, as the kernels apply it to the elementwise loss in its compute dtype.
Tensor reduce_loss(const Tensor& loss, Reduction r) {
  if (r == Reduction::None) return loss;
  const Tensor total = sum(loss);
  return r == Reduction::Sum ? total : over_numel(total, loss, /*gradient=*/false);
}

// A constant as the kernel computes it in the compute dtype (float32 or float64).
double in_dtype(double v, DType d) {
  return d == DType::Float64 ? v : static_cast<double>(static_cast<float>(v));
}

// mse_loss, smooth_l1_loss and huber_loss in kiln ops, with the kernels' formulas (loss.kernel.cpp)
// in float32 (float64 for float64 results).
std::vector<Tensor> regression_decomposition(const Stack& a, const char* op, PointwiseLoss kind,
                                             bool has_param) {
  const DType out = broadcast_loss_meta(a, op)[0].dtype;  // the argument checks too
  const double param = has_param ? a[3].to_double() : 0.0;
  KILN_CHECK(!has_param || param >= 0.0, "{}: {} must be non-negative, got {}", op,
             kind == PointwiseLoss::Huber ? "delta" : "beta", param);
  const DType c = compute_dtype_for(out);
  const Tensor diff = a[0].to_tensor().to(c) - a[1].to_tensor().to(c);
  Tensor loss;
  if (kind == PointwiseLoss::Mse) {
    loss = diff * diff;
  } else if (kind == PointwiseLoss::SmoothL1 && param == 0.0) {
    loss = abs(diff);  // the limit: plain L1
  } else if (kind == PointwiseLoss::SmoothL1) {
    const Tensor d = abs(diff);
    const double half_over_beta = in_dtype(in_dtype(0.5, c) / in_dtype(param, c), c);
    loss = where(d < param, d * half_over_beta * d, d - 0.5 * in_dtype(param, c));
  } else {
    const Tensor d = abs(diff);
    loss = where(d < param, d * 0.5 * d, (d - 0.5 * in_dtype(param, c)) * param);
  }
  return {reduce_loss(loss, reduction_arg(a[2], op)).to(out)};
}

// binary_cross_entropy's checks on metadata (dtypes and sizes); the range check on the values
// is the kernel's own.
Metas bce_meta(const Stack& a) {
  const char* op = "binary_cross_entropy";
  const Tensor& self = a[0].to_tensor();
  const Tensor& target = a[1].to_tensor();
  check_floating(self.dtype(), op);
  check_floating(target.dtype(), op);
  KILN_CHECK(IntList(self.sizes()) == IntList(target.sizes()),
             "{}: target size {} must be the same as input size {}", op, sizes_str(target.sizes()),
             sizes_str(self.sizes()));
  const Tensor weight = a[2].to_optional_tensor();
  KILN_CHECK(!weight.defined() ||
                 broadcast_shapes(self.sizes(), weight.sizes(), op) == DimVector(self.sizes()),
             "{}: weight of size {} must broadcast to the input size {}", op,
             sizes_str(weight.sizes()), sizes_str(self.sizes()));
  return Metas{loss_meta(self.sym_sizes(), self.dtype(), self.device(), reduction_arg(a[3], op))};
}

// binary_cross_entropy in kiln ops: (t - 1) max(log1p(-x), -100) - t max(log x, -100), weighted,
// in float32 (float64 for float64 inputs). Inputs outside [0, 1] are not refused: that check
// reads the values, which a decomposition cannot (PyTorch's decomposition does not make it
// either).
std::vector<Tensor> bce_decomposition(const Stack& a) {
  const DType out = bce_meta(a)[0].dtype;
  const DType c = compute_dtype_for(out);
  const Tensor x = a[0].to_tensor().to(c), t = a[1].to_tensor().to(c);
  Tensor loss =
      (t - 1.0) * maximum(log1p(-x), Scalar(-100.0)) - t * maximum(log(x), Scalar(-100.0));
  const Tensor weight = a[2].to_optional_tensor();
  if (weight.defined()) loss = (loss * weight).to(c);
  return {reduce_loss(loss, reduction_arg(a[3], "binary_cross_entropy")).to(out)};
}

// ---- derivatives ----

// The gradient's factor for a reduction over n elements: 1/n for mean (0 when empty), else 1.
// g is 0-dim for mean and sum, elementwise for none.
Tensor reduced_scale(const Tensor& g, Reduction r, const Tensor& of) {
  return r == Reduction::Mean ? over_numel(g, of, /*gradient=*/true) : g;
}

// d/dself of loss(self - target) is f'(diff) scaled; d/dtarget is its negation.
std::vector<Tensor> regression_derivative(const BackwardArgs& a, PointwiseLoss kind) {
  const Tensor& self = a.inputs[0].to_tensor();
  const Tensor& target = a.inputs[1].to_tensor();
  const Reduction r = reduction_arg(a.inputs[2], "loss derivative");
  const Tensor diff = self - target;
  const Tensor scale = reduced_scale(a.grad_outputs[0], r, diff);
  Tensor grad;
  switch (kind) {
    case PointwiseLoss::Mse:
      grad = diff * (scale * 2.0);
      break;
    case PointwiseLoss::SmoothL1: {
      // beta 0 is l1_loss (PyTorch's smooth_l1_loss_backward defers to it): sign, 0 at a tie.
      const double beta = a.inputs[3].to_double();
      grad = (beta == 0.0 ? diff.sign() : (diff / beta).clamp(-1.0, 1.0)) * scale;
      break;
    }
    case PointwiseLoss::Huber: {
      const double delta = a.inputs[3].to_double();
      grad = diff.clamp(-delta, delta) * scale;
      break;
    }
    default:
      KILN_FAIL("internal error: no derivative for pointwise loss {}", static_cast<int>(kind));
  }
  return {grad, -grad};
}

// PyTorch's binary_cross_entropy_backward (the denominator clamped at 1e-12) for self; for
// target the derivative of the forward as computed, logs clamped at -100 (finite at 0 and 1);
// for weight the unweighted elementwise loss.
std::vector<Tensor> bce_derivative(const BackwardArgs& a) {
  const Tensor& x = a.inputs[0].to_tensor();
  const Tensor& t = a.inputs[1].to_tensor();
  const Tensor weight = a.inputs[2].to_optional_tensor();
  const Reduction r = reduction_arg(a.inputs[3], "binary_cross_entropy");
  const Tensor unweighted_scale = reduced_scale(a.grad_outputs[0], r, x);
  const Tensor scale = weight.defined() ? unweighted_scale * weight : unweighted_scale;
  const Tensor grad_self = (x - t) / (x * (1.0 - x)).clamp_min(1e-12) * scale;
  const Tensor log_x = x.log().clamp_min(-100.0);
  const Tensor log_1mx = (-x).log1p().clamp_min(-100.0);
  const Tensor grad_target = (log_1mx - log_x) * scale;
  // The weight multiplies each element's loss -(log(1 - x) + t (log x - log(1 - x))), clamped
  // logs as in the forward (PyTorch has no gradient for it).
  Tensor grad_weight;
  if (weight.defined()) grad_weight = -(log_1mx + t * (log_x - log_1mx)) * unweighted_scale;
  return {grad_self, grad_target, grad_weight};
}

}  // namespace

KILN_REGISTER_OPS(pointwise_losses) {
  const PointwiseLossOp ops_[] = {
      {"mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", "mse_loss",
       PointwiseLoss::Mse, false},
      {"smooth_l1_loss(Tensor self, Tensor target, int reduction=1, float beta=1.0) -> Tensor",
       "smooth_l1_loss", PointwiseLoss::SmoothL1, true},
      {"huber_loss(Tensor self, Tensor target, int reduction=1, float delta=1.0) -> Tensor",
       "huber_loss", PointwiseLoss::Huber, true},
  };
  for (const PointwiseLossOp& p : ops_) {
    const char* name = p.name;
    const PointwiseLoss kind = p.kind;
    const bool has_param = p.has_param;
    std::vector<Stack> extras = {{}};
    if (kind == PointwiseLoss::SmoothL1) extras = {{}, {0.5}, {0.0}};
    if (kind == PointwiseLoss::Huber) extras = {{}, {2.0}, {0.25}};
    declare(
        OpBuilder(p.schema)
            .meta([name](const Stack& a) { return broadcast_loss_meta(a, name); })
            .cpu([name, kind, has_param](const Stack& a, const Outs& out) {
              const double param = has_param ? a[3].to_double() : 0.0;
              KILN_CHECK(!has_param || param >= 0.0, "{}: {} must be non-negative, got {}", name,
                         kind == PointwiseLoss::Huber ? "delta" : "beta", param);
              reduce_pointwise(a[0].to_tensor(), a[1].to_tensor(), Tensor(),
                               reduction_arg(a[2], name), kind, param, out, name);
            })
            .derivative([kind](const BackwardArgs& a) { return regression_derivative(a, kind); })
            .decomposition([name, kind, has_param](const Stack& a) {
              return regression_decomposition(a, name, kind, has_param);
            })
            .out_variant()
            .tolerance(1e-5, 1e-5)
            .samples([extras] {
              std::vector<Sample> s;
              for (const Stack& e : extras) {
                for (Sample& x : regression_samples(e)) s.push_back(std::move(x));
              }
              return s;
            }));
  }
}

KILN_OP(
    "binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=1) -> "
    "Tensor")
    .meta(bce_meta)
    .cpu([](const Stack& a, const Outs& out) {
      const char* op = "binary_cross_entropy";
      const Tensor& self = a[0].to_tensor();
      const Tensor& target = a[1].to_tensor();
      auto check_unit = [op](const Tensor& t, const char* what) {
        if (t.numel() == 0) return;
        const Tensor v = t.to(kFloat64).contiguous();
        const double* p = v.data_ptr<double>();
        for (int64_t i = 0; i < v.numel(); ++i) {
          KILN_CHECK(p[i] >= 0.0 && p[i] <= 1.0,
                     "{}: all elements of {} should be between 0 and 1, but found {}", op, what,
                     p[i]);
        }
      };
      check_unit(self, "input");
      check_unit(target, "target");
      reduce_pointwise(self, target, a[2].to_optional_tensor(), reduction_arg(a[3], op),
                       PointwiseLoss::BinaryCrossEntropy, 0.0, out, op);
    })
    .derivative(bce_derivative)
    .decomposition(bce_decomposition)
    .out_variant()
    .tolerance(1e-5, 1e-5)
    .samples(bce_samples);

KILN_OP("l1_loss(Tensor self, Tensor target, int reduction=1) -> Tensor")
    .composite([](const Stack& a) {
      const Tensor& self = a[0].to_tensor();
      const Tensor& target = a[1].to_tensor();
      return std::vector<Tensor>{
          apply_loss_reduction((self - target).abs(), reduction_arg(a[2], "l1_loss"))};
    })
    .samples([] { return regression_samples({}); });

// loss = (1 - t) x - (1 + (pos_weight - 1) t) log(sigmoid(x)), with log(sigmoid(x)) =
// -softplus(-x): stable for large |x| (softplus is linear beyond its threshold), and its gradient
// 1 - sigmoid(x) is right at x = 0 too (min(x, 0) - log1p(exp(-|x|)) has kinks there whose
// subgradients do not cancel).
KILN_OP(
    "binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, Tensor? "
    "pos_weight=None, int reduction=1) -> Tensor")
    .composite([](const Stack& a) {
      const char* op = "binary_cross_entropy_with_logits";
      const Tensor& self = a[0].to_tensor();
      const Tensor& target = a[1].to_tensor();
      const Tensor weight = a[2].to_optional_tensor();
      const Tensor pos_weight = a[3].to_optional_tensor();
      const Reduction r = reduction_arg(a[4], op);
      check_floating(self.dtype(), op);
      KILN_CHECK(IntList(self.sizes()) == IntList(target.sizes()),
                 "{}: target size {} must be the same as input size {}", op,
                 sizes_str(target.sizes()), sizes_str(self.sizes()));
      Tensor log_sigmoid = -softplus(-self);
      if (pos_weight.defined()) log_sigmoid = log_sigmoid * ((pos_weight - 1.0) * target + 1.0);
      Tensor loss = (1.0 - target) * self - log_sigmoid;
      if (weight.defined()) loss = loss * weight;
      return std::vector<Tensor>{apply_loss_reduction(loss, r)};
    })
    .tolerance(1e-5, 1e-5)
    .samples(bce_logits_samples);

KILN_OP("kl_div(Tensor self, Tensor target, int reduction=1, *, bool log_target=False) -> Tensor")
    .composite([](const Stack& a) {
      const Tensor& self = a[0].to_tensor();
      const Tensor& target = a[1].to_tensor();
      const Reduction r = reduction_arg(a[2], "kl_div");
      Tensor loss;
      if (a[3].to_bool()) {
        loss = target.exp() * (target - self);
      } else {
        // xlogy(t, t) - t * input, with xlogy(0, y) = 0.
        loss = where(target == 0.0, 0.0, target * target.log()) - target * self;
      }
      return std::vector<Tensor>{apply_loss_reduction(loss, r)};
    })
    .tolerance(1e-5, 1e-5)
    .samples(kl_div_samples);

}  // namespace kiln::ops

namespace kiln {

Tensor mse_loss(const Tensor& input, const Tensor& target, ReductionArg reduction,
                const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::op_named("mse_loss");
  return ops::call1(op, {input, target, ops::reduction_value(reduction)}, &loc);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, ReductionArg reduction,
               const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::op_named("l1_loss");
  return ops::call1(op, {input, target, ops::reduction_value(reduction)}, &loc);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossOptions& options,
                      const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::op_named("smooth_l1_loss");
  return ops::call1(op, {input, target, ops::reduction_value(options.reduction), options.beta},
                    &loc);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossOptions& options,
                  const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::op_named("huber_loss");
  return ops::call1(op, {input, target, ops::reduction_value(options.reduction), options.delta},
                    &loc);
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BinaryCrossEntropyOptions& options,
                            const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::op_named("binary_cross_entropy");
  return ops::call1(op,
                    {input, target, ops::optional_tensor(options.weight),
                     ops::reduction_value(options.reduction)},
                    &loc);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsOptions& options,
                                        const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::op_named("binary_cross_entropy_with_logits");
  return ops::call1(
      op,
      {input, target, ops::optional_tensor(options.weight),
       ops::optional_tensor(options.pos_weight), ops::reduction_value(options.reduction)},
      &loc);
}

Tensor kl_div(const Tensor& input, const Tensor& target, const KlDivOptions& options,
              const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::op_named("kl_div");
  return ops::call1(
      op, {input, target, ops::reduction_value(options.reduction), options.log_target}, &loc);
}

}  // namespace kiln
