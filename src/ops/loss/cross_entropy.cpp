// cross_entropy_loss, a composite as in aten: log_softmax then nll_loss_nd for class indices,
// the label-smoothing blend, or the probability-target sum. On the CPU, for (N, C) logits with
// class indices and nothing requiring grad, one fused pass per row computes the row's
// log-sum-exp and the target's log-probability without materializing log_softmax.
#include "ops/loss/loss_common.h"
#include "ops/samples.h"
#include "ops/softmax/softmax_kernels.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/indexing.h>
#include <kiln/ops/reduction.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/softmax.h>
#include <kiln/ops/unary.h>

#include <vector>

namespace kiln::ops {
namespace {

const char* kCrossEntropy = "cross_entropy_loss";

// weight viewed as (1, C, 1, ...) to broadcast against input (or as is for 1-D input).
Tensor class_weight_view(const Tensor& weight, const Tensor& input) {
  if (input.dim() <= 1) return weight.view({-1});
  DimVector shape(static_cast<size_t>(input.dim()), 1);
  shape[1] = weight.numel();
  return weight.view(shape);
}

bool can_fuse(const Tensor& self, const Tensor& target, const Tensor& weight,
              double label_smoothing) {
  if (!self.is_cpu() || self.dim() != 2 || target.dim() != 1 || label_smoothing > 0.0) {
    return false;
  }
  if (self.dtype() != DType::Float32 && self.dtype() != DType::Float64) return false;
  if (target.dtype() != DType::Int64 && target.dtype() != DType::UInt8) return false;
  if (self.requires_grad()) return false;
  if (weight.defined() && (weight.requires_grad() || weight.dtype() != self.dtype())) return false;
  return true;
}

// The fused op's checks on metadata: (N, C) floating logits, (N) int64/uint8 targets, a weight
// per class. Returns the reduction.
Reduction check_fused_arguments(const Stack& a) {
  const Tensor& self = a[0].to_tensor();
  const Tensor& target = a[1].to_tensor();
  KILN_CHECK(self.dim() == 2 && is_floating_point(self.dtype()),
             "_fused_cross_entropy_loss: expected 2-D floating point logits, got {}-D {}",
             self.dim(), dtype_name(self.dtype()));
  check_class_target_dtype(target, kCrossEntropy);
  KILN_CHECK(target.dim() == 1 && target.size(0) == self.size(0),
             "{}: expected input batch_size ({}) to match target batch_size ({})", kCrossEntropy,
             self.size(0), target.dim() == 1 ? target.size(0) : int64_t{0});
  check_class_weight(a[2].to_optional_tensor(), self.size(1), kCrossEntropy);
  return reduction_arg(a[3], kCrossEntropy);
}

Tensor fused_cross_entropy(const Tensor& self, const Tensor& target, const Tensor& weight,
                           Reduction reduction, int64_t ignore_index) {
  const int64_t n = self.size(0), c = self.size(1);
  KILN_CHECK(target.size(0) == n,
             "{}: expected input batch_size ({}) to match target batch_size ({})", kCrossEntropy, n,
             target.size(0));
  check_class_weight(weight, c, kCrossEntropy);
  check_class_targets(target, c, ignore_index, kCrossEntropy);
  const Tensor x = self.contiguous();
  const Tensor t = target.to(DType::Int64).contiguous();
  const Tensor w = weight.defined() ? weight.contiguous() : Tensor();
  std::vector<double> row_loss(static_cast<size_t>(n)), row_weight(static_cast<size_t>(n));
  if (n > 0) {
    cross_entropy_rows_kernels(x.data_ptr(), self.dtype(), n, c, t.data_ptr<int64_t>(),
                               w.defined() ? w.data_ptr() : nullptr, ignore_index, row_loss.data(),
                               row_weight.data());
  }
  if (reduction == Reduction::None) return from_vector(row_loss, {n}).to(self.dtype());
  double total = 0.0, total_weight = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    total += row_loss[static_cast<size_t>(i)];
    total_weight += row_weight[static_cast<size_t>(i)];
  }
  return scalar_tensor(reduction == Reduction::Mean ? total / total_weight : total, self.dtype());
}

Tensor probability_target_loss(const Tensor& self, const Tensor& target, const Tensor& weight,
                               Reduction reduction, int64_t ignore_index, double label_smoothing) {
  KILN_CHECK_T(TypeError, is_floating_point(target.dtype()),
               "{}: expected floating point type for target with class probabilities (target "
               "of input's shape {}), got {}",
               kCrossEntropy, sizes_str(self.sizes()), dtype_name(target.dtype()));
  KILN_CHECK(ignore_index < 0, "{}: ignore_index ({}) is not supported for probability targets",
             kCrossEntropy, ignore_index);
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  const int64_t classes = self.size(class_dim);
  check_class_weight(weight, classes, kCrossEntropy);
  const Tensor input = log_softmax(self, class_dim, self.dtype());
  Tensor t = target;
  if (label_smoothing > 0.0) {
    t = target * (1.0 - label_smoothing) + label_smoothing / static_cast<double>(classes);
  }
  Tensor prod = input * t;
  if (weight.defined()) prod = prod * class_weight_view(weight, input);
  switch (reduction) {
    case Reduction::None:
      return -prod.sum(IntList{class_dim});
    case Reduction::Sum:
      return -prod.sum();
    case Reduction::Mean:
      if (input.numel() == 0) return -prod.sum() * std::numeric_limits<double>::quiet_NaN();
      return -prod.sum() / static_cast<double>(input.numel() / classes);
  }
  return Tensor();
}

// (1 - eps) nll + eps / C * smooth, smooth = -sum_c w_c log p_c over non-ignored targets.
Tensor label_smoothing_loss(const Tensor& self, const Tensor& target, const Tensor& weight,
                            Reduction reduction, int64_t ignore_index, double label_smoothing) {
  static const OpDef& nll_nd = op_named("nll_loss_nd");
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  const Tensor input = log_softmax(self, class_dim, self.dtype());
  const Tensor nll = call1(
      nll_nd, {input, target, optional_tensor(weight), reduction_value(reduction), ignore_index});
  const int64_t classes = input.size(class_dim);
  const Tensor ignored = target == ignore_index;
  Tensor smooth = weight.defined()
                      ? -(input * class_weight_view(weight, input)).sum(IntList{class_dim})
                      : -input.sum(IntList{class_dim});
  smooth = where(ignored, 0.0, smooth);
  Tensor ret;
  switch (reduction) {
    case Reduction::None:
      ret = smooth;
      break;
    case Reduction::Sum:
      ret = smooth.sum();
      break;
    case Reduction::Mean:
      if (weight.defined()) {
        // Normalized by the weights of the non-ignored targets, like nll_loss.
        const Tensor safe = where(ignored, int64_t{0}, target.to(kInt64)).view({-1});
        const Tensor kept = logical_not(ignored).view({-1});
        ret = smooth.sum() / (weight.reshape({-1}).gather(0, safe) * kept).sum();
      } else {
        ret = smooth.sum() / logical_not(ignored).sum();
      }
      break;
  }
  return nll * (1.0 - label_smoothing) + ret * (label_smoothing / static_cast<double>(classes));
}

std::vector<Sample> fused_cross_entropy_samples() {
  const Tensor x = make_sample({4, 5}, kFloat32, -3.0, 3.0);
  const Tensor t = make_sample({4}, kInt64, 0.0, 5.0, 1);
  const Tensor w = make_sample({5}, kFloat32, 0.2, 2.0, 2);
  const Tensor ignored = tensor({1, -100, 4, 0}, kInt64);
  std::vector<Sample> s;
  for (int64_t r = 0; r <= 2; ++r) {
    s.push_back({{x, t, IValue(), r, int64_t{-100}}, "class indices"});
    s.push_back({{x, ignored, w, r, int64_t{-100}}, "weight, ignore_index"});
  }
  s.push_back({{make_sample({3, 37}, kFloat64, -50, 50), make_sample({3}, kInt64, 0, 37, 1),
                IValue(), int64_t{1}, int64_t{-100}},
               "float64 SIMD tail"});
  s.push_back({{make_sample({0, 5}, kFloat32), make_sample({0}, kInt64, 0, 5), IValue(), int64_t{1},
                int64_t{-100}},
               "empty"});
  s.push_back({{x, t.to(kUInt8), IValue(), int64_t{2}, int64_t{-100}}, "uint8 target"});
  s.push_back({{x, tensor({0, 5, 1, 2}, kInt64), IValue(), int64_t{1}, int64_t{-100}},
               "class index out of range"});
  s.push_back(
      {{x, make_sample({3}, kInt64, 0, 5), IValue(), int64_t{1}, int64_t{-100}}, "batch mismatch"});
  return s;
}

std::vector<Sample> cross_entropy_samples() {
  const Tensor x = make_sample({4, 5}, kFloat32, -3.0, 3.0);
  const Tensor t = make_sample({4}, kInt64, 0.0, 5.0, 1);
  const Tensor w = make_sample({5}, kFloat32, 0.2, 2.0, 2);
  const Tensor ignored = tensor({1, -100, 4, 0}, kInt64);
  const Tensor probs = softmax(make_sample({4, 5}, kFloat32, -2.0, 2.0, 3), 1);
  const Tensor x3 = make_sample({2, 3, 4}, kFloat64);
  const Tensor t3 = make_sample({2, 4}, kInt64, 0.0, 3.0, 1);
  const Tensor w3 = make_sample({3}, kFloat64, 0.2, 2.0, 2);
  std::vector<Sample> s;
  for (int64_t r = 0; r <= 2; ++r) {
    s.push_back({{x, t, IValue(), r}, "class indices"});
    s.push_back({{x, ignored, w, r, int64_t{-100}}, "weight, ignore_index"});
    s.push_back({{x, ignored, w, r, int64_t{-100}, 0.2}, "label smoothing, weight"});
    s.push_back({{x, ignored, IValue(), r, int64_t{-100}, 0.1}, "label smoothing"});
    s.push_back({{x, probs, IValue(), r}, "probabilities"});
    s.push_back({{x, probs, w, r, int64_t{-100}, 0.3}, "probabilities, weight, smoothing"});
    s.push_back({{x3, t3, w3, r, int64_t{1}}, "K-dim"});
    s.push_back({{x3, t3, w3, r, int64_t{-100}, 0.25}, "K-dim smoothing"});
    s.push_back({{make_sample({2, 3, 2, 3}, kFloat32), make_sample({2, 2, 3}, kInt64, 0, 3, 1),
                  IValue(), r},
                 "4-D"});
  }
  s.push_back({{make_sample({5}, kFloat32), scalar_tensor(int64_t{2}, kInt64)}, "no batch dim"});
  s.push_back({{make_sample({3, 37}, kFloat64, -50, 50), make_sample({3}, kInt64, 0, 37, 1)},
               "float64 SIMD tail"});
  s.push_back({{make_noncontiguous_sample({4, 5}, kFloat32), t}, "non-contiguous"});
  s.push_back({{x.to(kFloat64) * 1e4, t}, "large magnitude"});
  s.push_back({{make_sample({0, 5}, kFloat32), make_sample({0}, kInt64, 0, 5)}, "empty"});
  s.push_back({{x, tensor({-100, -100, -100, -100}, kInt64)}, "all ignored"});
  s.push_back({{x, t.to(kUInt8)}, "uint8 target"});
  s.push_back({{x, tensor({0, 5, 1, 2}, kInt64)}, "class index out of range"});
  s.push_back({{x, tensor({0, -1, 1, 2}, kInt64)}, "negative class index"});
  s.push_back({{x, make_sample({3}, kInt64, 0, 5)}, "batch mismatch"});
  s.push_back({{x, t, make_sample({4}, kFloat32)}, "weight of wrong size"});
  s.push_back({{x, t.to(kInt32)}, "int32 target"});
  s.push_back({{x, probs, IValue(), int64_t{1}, int64_t{0}}, "probabilities with ignore_index"});
  s.push_back({{x, probs.to(kInt64)}, "integer probabilities"});
  s.push_back({{x, t, IValue(), int64_t{1}, int64_t{-100}, 1.5}, "label smoothing above 1"});
  return s;
}

}  // namespace

// The fused CPU pass for (N, C) float32/float64 logits with class indices (what
// cross_entropy_loss runs when nothing requires grad): an op of its own, so that its
// decomposition (what it fuses: log_softmax, then nll_loss_nd) stands in for the kernel when the
// loss is decomposed or traced.
KILN_OP(
    "_fused_cross_entropy_loss(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt "
    "ignore_index) -> Tensor")
    .custom(DeviceType::CPU,
            [](const Stack& a) {
              const Reduction reduction = check_fused_arguments(a);
              return std::vector<Tensor>{fused_cross_entropy(a[0].to_tensor(), a[1].to_tensor(),
                                                             a[2].to_optional_tensor(), reduction,
                                                             a[4].to_int())};
            })
    .custom(DeviceType::Meta,
            [](const Stack& a) {
              const Tensor& self = a[0].to_tensor();
              const Reduction reduction = check_fused_arguments(a);
              const DimVector sizes =
                  reduction == Reduction::None ? DimVector{self.size(0)} : DimVector{};
              return std::vector<Tensor>{
                  empty(sizes, TensorOptions().dtype(self.dtype()).device(Device::meta()))};
            })
    .decomposition([](const Stack& a) {
      check_fused_arguments(a);
      static const OpDef& nll_nd = op_named("nll_loss_nd");
      const Tensor& self = a[0].to_tensor();
      return call(nll_nd, {log_softmax(self, 1, self.dtype()), a[1], a[2], a[3], a[4]});
    })
    .not_differentiable()
    .tolerance(1e-5, 1e-5)
    .samples(fused_cross_entropy_samples);

KILN_OP(
    "cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt "
    "ignore_index=-100, float label_smoothing=0.0) -> Tensor")
    .composite([](const Stack& a) {
      static const OpDef& nll_nd = op_named("nll_loss_nd");
      const Tensor& self = a[0].to_tensor();
      const Tensor& target = a[1].to_tensor();
      const Tensor weight = a[2].to_optional_tensor();
      const Reduction reduction = reduction_arg(a[3], kCrossEntropy);
      const int64_t ignore_index = a[4].to_int();
      const double label_smoothing = a[5].to_double();
      KILN_CHECK(label_smoothing <= 1.0, "{}: label_smoothing must be between 0.0 and 1.0. Got: {}",
                 kCrossEntropy, label_smoothing);
      KILN_CHECK(self.dim() >= 1, "{}: expected input with 1 or more dimensions (got 0)",
                 kCrossEntropy);
      const bool same_shape = IntList(self.sizes()) == IntList(target.sizes());
      KILN_CHECK(same_shape || !is_floating_point(target.dtype()),
                 "{}: a floating point target holds class probabilities and must have the "
                 "input's shape {}, but got {} (class indices must be int64)",
                 kCrossEntropy, sizes_str(self.sizes()), sizes_str(target.sizes()));
      Tensor out;
      if (same_shape) {
        out =
            probability_target_loss(self, target, weight, reduction, ignore_index, label_smoothing);
      } else if (label_smoothing > 0.0) {
        out = label_smoothing_loss(self, target, weight, reduction, ignore_index, label_smoothing);
      } else if (can_fuse(self, target, weight, label_smoothing)) {
        static const OpDef& fused = op_named("_fused_cross_entropy_loss");
        out = call1(fused, {a[0], a[1], a[2], a[3], a[4]});
      } else {
        const int64_t class_dim = self.dim() == 1 ? 0 : 1;
        out = call1(nll_nd, {log_softmax(self, class_dim, self.dtype()), target, a[2], a[3], a[4]});
      }
      return std::vector<Tensor>{out};
    })
    .tolerance(1e-5, 1e-5)
    .samples(cross_entropy_samples);

}  // namespace kiln::ops

namespace kiln {

Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyOptions& options,
                     const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::OpRegistry::instance().get("cross_entropy_loss");
  return ops::call1(
      op,
      {input, target, ops::optional_tensor(options.weight), ops::reduction_value(options.reduction),
       options.ignore_index, options.label_smoothing},
      &loc);
}

}  // namespace kiln
