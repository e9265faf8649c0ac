// nll_loss_forward and nll_loss2d_forward (structured: (output, total_weight)), and the
// nll_loss / nll_loss2d / nll_loss_nd composites over them, as aten has them.
#include "ops/loss/loss_common.h"
#include "ops/samples.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/indexing.h>
#include <kiln/ops/reduction.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/view.h>

namespace kiln::ops {
namespace {

using Metas = std::vector<TensorMeta>;
using Outs = std::vector<Tensor>;

template <typename T>
double to_double(T v) {
  return static_cast<double>(static_cast<opmath_t<T>>(v));
}
template <typename T>
T from_double(double v) {
  return T(static_cast<opmath_t<T>>(v));
}

// The shared forward over input viewed as (n, c, k) and target as (n, k): per element when
// `per_element` (reduction none), else the sum (or mean over the weights) into one value.
void nll_forward(const Tensor& self, const Tensor& target, const Tensor& weight,
                 Reduction reduction, int64_t ignore_index, int64_t n, int64_t c, int64_t k,
                 bool per_element, const Outs& out, const char* op) {
  check_class_targets(target, c, ignore_index, op);
  Tensor x = self.contiguous();
  Tensor t = target.to(DType::Int64).contiguous();
  Tensor w = weight.defined() ? weight.to(self.dtype()).contiguous() : Tensor();
  KILN_DISPATCH_FLOATING(self.dtype(), op, [&]<typename T>() {
    const T* xp = x.numel() ? x.data_ptr<T>() : nullptr;
    const int64_t* tp = t.numel() ? t.data_ptr<int64_t>() : nullptr;
    const T* wp = w.defined() ? w.data_ptr<T>() : nullptr;
    auto loss_at = [&](int64_t i, int64_t j, double* wt) {
      const int64_t cls = tp[i * k + j];
      if (cls == ignore_index) {
        *wt = 0.0;
        return 0.0;
      }
      *wt = wp ? to_double(wp[cls]) : 1.0;
      return -to_double(xp[(i * c + cls) * k + j]) * *wt;
    };
    if (per_element) {
      Tensor o = out[0].is_contiguous() ? out[0] : empty(out[0].sizes(), self.dtype());
      T* op_ = o.numel() ? o.data_ptr<T>() : nullptr;
      double wt = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < k; ++j) op_[i * k + j] = from_double<T>(loss_at(i, j, &wt));
      }
      if (!o.is_same(out[0])) {
        Tensor dst = out[0];
        dst.copy_(o);
      }
      Tensor tw = out[1];
      tw.zero_();
      return;
    }
    double total = 0.0;
    double total_weight = 0.0;
    double wt = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < k; ++j) {
        total += loss_at(i, j, &wt);
        total_weight += wt;
      }
    }
    const double value = reduction == Reduction::Mean ? total / total_weight : total;
    Tensor o = out[0];
    o.fill_(value);
    Tensor tw = out[1];
    tw.fill_(total_weight);
  });
}

void check_floating_input(const Tensor& self, const char* op) {
  KILN_CHECK_T(TypeError, is_floating_point(self.dtype()),
               "{}: expected a floating point input (log-probabilities), got {}", op,
               dtype_name(self.dtype()));
}

Metas nll_loss_forward_meta(const Stack& a) {
  const char* op = "nll_loss_forward";
  const Tensor& self = a[0].to_tensor();
  const Tensor& target = a[1].to_tensor();
  const Tensor weight = a[2].to_optional_tensor();
  const Reduction reduction = reduction_arg(a[3], op);
  check_floating_input(self, op);
  check_class_target_dtype(target, op);
  KILN_CHECK(self.dim() >= 1 && self.dim() <= 2, "{}: input tensor should be 1D or 2D, got {}D", op,
             self.dim());
  KILN_CHECK(target.dim() <= 1,
             "{}: 0D or 1D target tensor expected, multi-target not supported (got target of "
             "size {})",
             op, sizes_str(target.sizes()));
  const bool no_batch = self.dim() == 1 && target.numel() == 1;
  KILN_CHECK(no_batch || (self.dim() == 2 && target.dim() == 1 && self.size(0) == target.size(0)),
             "{}: size mismatch (got input: {}, target: {}): expected one target per row of the "
             "input",
             op, sizes_str(self.sizes()), sizes_str(target.sizes()));
  check_class_weight(weight, self.size(-1), op);
  check_weight_dtype(weight, self, op);
  SymDimVector out_sizes;
  if (reduction == Reduction::None && self.dim() == 2) out_sizes.push_back(self.sym_size(0));
  return {TensorMeta::contiguous(out_sizes, self.dtype(), self.device()),
          TensorMeta::contiguous({}, self.dtype(), self.device())};
}

Metas nll_loss2d_forward_meta(const Stack& a) {
  const char* op = "nll_loss2d_forward";
  const Tensor& self = a[0].to_tensor();
  const Tensor& target = a[1].to_tensor();
  const Tensor weight = a[2].to_optional_tensor();
  const Reduction reduction = reduction_arg(a[3], op);
  check_floating_input(self, op);
  check_class_target_dtype(target, op);
  KILN_CHECK(self.dim() == 4,
             "{}: only batches of spatial inputs supported (4D tensors), but got input of size: {}",
             op, sizes_str(self.sizes()));
  KILN_CHECK(target.dim() == 3,
             "{}: only batches of spatial targets supported (3D tensors) but got targets of size: "
             "{}",
             op, sizes_str(target.sizes()));
  KILN_CHECK(self.size(0) == target.size(0) && self.size(2) == target.size(1) &&
                 self.size(3) == target.size(2),
             "{}: size mismatch (got input: {}, target: {}): expected target (N, H, W) for input "
             "(N, C, H, W)",
             op, sizes_str(self.sizes()), sizes_str(target.sizes()));
  check_class_weight(weight, self.size(1), op);
  check_weight_dtype(weight, self, op);
  SymDimVector out_sizes;
  if (reduction == Reduction::None) out_sizes = target.sym_sizes().vec();
  return {TensorMeta::contiguous(out_sizes, self.dtype(), self.device()),
          TensorMeta::contiguous({}, self.dtype(), self.device())};
}

// nll_loss_forward / nll_loss2d_forward in kiln ops, after the op's meta checks. Input (N, C)
// (or (C)) or (N, C, H, W), target (N) or (N, H, W): each sample's loss is -w[t] x[t] along the
// class dim (0 where t is ignore_index), summed in float64 with the total weight, as the kernel
// does. A class index out of range fails in gather.
std::vector<Tensor> nll_decomposition(const Stack& a, bool per_element) {
  const Tensor& self = a[0].to_tensor();
  const bool single = self.dim() == 1;
  const Tensor x = (single ? self.unsqueeze(0) : self).to(DType::Float64);
  const Tensor target = a[1].to_tensor().to(DType::Int64);
  const Tensor t = single ? target.reshape({1}) : target;
  const Tensor weight = a[2].to_optional_tensor();
  const Tensor valid = t != Scalar(a[4].to_int());
  const Tensor safe = where(valid, t, Scalar(int64_t{0}));  // only ignored targets are replaced
  const Tensor picked = x.gather(1, safe.unsqueeze(1)).squeeze(IntList{1});
  Tensor w = valid.to(DType::Float64);
  if (weight.defined()) {
    const Tensor class_weight = weight.reshape({-1}).to(DType::Float64);
    w = where(valid, class_weight.gather(0, safe.reshape({-1})).reshape(safe.sizes()), 0.0);
  }
  const Tensor loss = where(valid, -picked * w, 0.0);
  if (per_element) return {loss.to(self.dtype()), full({}, 0, self.dtype())};
  const Tensor total = sum(loss), total_weight = sum(w);
  const bool mean = reduction_arg(a[3], "nll_loss") == Reduction::Mean;
  return {(mean ? total / total_weight : total).to(self.dtype()), total_weight.to(self.dtype())};
}

Tensor log_probs(IntList sizes, DType dtype = kFloat32, uint64_t seed = 0) {
  return make_sample(sizes, dtype, -4.0, 0.0, seed);
}
Tensor classes(IntList sizes, int64_t c, uint64_t seed = 1) {
  return make_sample(sizes, kInt64, 0.0, static_cast<double>(c), seed);
}

std::vector<Sample> nll_loss_forward_samples() {
  const Tensor w = make_sample({5}, kFloat32, 0.1, 2.0, 7);
  Tensor with_ignored = tensor({0, 4, -100, 2}, kInt64);
  return {
      {{log_probs({4, 5}), classes({4}, 5), IValue(), int64_t{1}, int64_t{-100}}, "mean"},
      {{log_probs({4, 5}), classes({4}, 5), w, int64_t{1}, int64_t{-100}}, "mean, weight"},
      {{log_probs({4, 5}), with_ignored, w, int64_t{1}, int64_t{-100}}, "weight, ignored"},
      {{log_probs({4, 5}), with_ignored, IValue(), int64_t{2}, int64_t{-100}}, "sum, ignored"},
      {{log_probs({4, 5}), with_ignored, w, int64_t{0}, int64_t{-100}}, "none, ignored"},
      {{log_probs({4, 5}, kFloat64), classes({4}, 5), IValue(), int64_t{1}, int64_t{2}},
       "ignore_index 2"},
      {{log_probs({5}), scalar_tensor(int64_t{3}, kInt64), IValue(), int64_t{1}, int64_t{-100}},
       "no batch dim"},
      {{log_probs({5}), scalar_tensor(int64_t{3}, kInt64), w, int64_t{0}, int64_t{-100}},
       "no batch dim, none"},
      {{log_probs({0, 5}), classes({0}, 5), IValue(), int64_t{1}, int64_t{-100}}, "empty mean"},
      {{log_probs({0, 5}), classes({0}, 5), IValue(), int64_t{0}, int64_t{-100}}, "empty none"},
      {{log_probs({3, 5}), tensor({-100, -100, -100}, kInt64), IValue(), int64_t{1}, int64_t{-100}},
       "all ignored"},
      {{make_noncontiguous_sample({4, 5}, kFloat32, -4.0, 0.0), classes({4}, 5), IValue(),
        int64_t{1}, int64_t{-100}},
       "non-contiguous"},
      {{log_probs({4, 5}), tensor({0, 1, 5, 2}, kInt64), IValue(), int64_t{1}, int64_t{-100}},
       "class index out of range"},
      {{log_probs({4, 5}), classes({3}, 5), IValue(), int64_t{1}, int64_t{-100}},
       "batch size mismatch"},
      {{log_probs({4, 5}), classes({4}, 5), make_sample({4}, kFloat32), int64_t{1}, int64_t{-100}},
       "weight of wrong size"},
      {{log_probs({4, 5}), classes({4}, 5).to(kInt32), IValue(), int64_t{1}, int64_t{-100}},
       "int32 target"},
      {{log_probs({4, 5}), classes({4}, 5).to(kUInt8), IValue(), int64_t{2}, int64_t{-100}},
       "uint8 target"},
  };
}

std::vector<Sample> nll_loss2d_forward_samples() {
  const Tensor w = make_sample({3}, kFloat32, 0.1, 2.0, 7);
  Tensor target = classes({2, 4, 5}, 3);
  Tensor ignored = target.clone();
  ignored.select(1, 2).fill_(int64_t{-100});
  return {
      {{log_probs({2, 3, 4, 5}), target, IValue(), int64_t{1}, int64_t{-100}}, "mean"},
      {{log_probs({2, 3, 4, 5}), ignored, w, int64_t{1}, int64_t{-100}}, "weight, ignored"},
      {{log_probs({2, 3, 4, 5}), ignored, w, int64_t{0}, int64_t{-100}}, "none"},
      {{log_probs({2, 3, 4, 5}, kFloat64), target, w, int64_t{2}, int64_t{1}},
       "float64 input, float32 weight"},
      {{log_probs({2, 3, 4, 5}, kFloat64), target, w.to(kFloat64), int64_t{2}, int64_t{1}}, "sum"},
      {{log_probs({2, 3, 4, 5}), classes({2, 4, 4}, 3), IValue(), int64_t{1}, int64_t{-100}},
       "size mismatch"},
      {{log_probs({2, 3, 4}), classes({2, 4}, 3), IValue(), int64_t{1}, int64_t{-100}}, "3-D"},
  };
}

std::vector<Sample> nll_loss_nd_samples() {
  const Tensor w = make_sample({3}, kFloat32, 0.1, 2.0, 7);
  std::vector<Sample> s;
  for (int64_t r = 0; r <= 2; ++r) {
    s.push_back({{log_probs({4, 3}), classes({4}, 3), w, r, int64_t{-100}}, "2-D"});
    s.push_back({{log_probs({2, 3, 5}), classes({2, 5}, 3), w, r, int64_t{0}}, "3-D"});
    s.push_back(
        {{log_probs({2, 3, 2, 3}), classes({2, 2, 3}, 3), IValue(), r, int64_t{-100}}, "4-D"});
    s.push_back({{log_probs({2, 3, 2, 2, 2}), classes({2, 2, 2, 2}, 3), w, r, int64_t{1}}, "5-D"});
  }
  s.push_back({{log_probs({3}), scalar_tensor(int64_t{1}, kInt64)}, "1-D"});
  s.push_back({{log_probs({2, 3, 0}), classes({2, 0}, 3)}, "3-D empty"});
  s.push_back({{log_probs({2, 3, 0}), classes({2, 0}, 3), IValue(), int64_t{0}}, "3-D empty none"});
  s.push_back({{log_probs({2, 3, 5}), classes({2, 4}, 3)}, "target size mismatch"});
  s.push_back({{log_probs({2, 3, 5}), classes({3, 5}, 3)}, "batch mismatch"});
  return s;
}

std::vector<Sample> nll_loss_samples() {
  std::vector<Sample> s;
  for (const Sample& x : nll_loss_forward_samples()) s.push_back(x);
  return s;
}

// The derivative of nll_loss_forward and nll_loss2d_forward. Input (N, C, ...) (or (C)), target
// (N, ...), per-sample loss l_i = -w[t_i] x[i, t_i] (0 for ignored samples); total weight
// W = sum of w[t_i] over the others (the second output; 0 for none on a batch); output L = sum l_i
// (sum), L / W (mean), or l_i (none).
//   d/dx[i, t_i] = -w[t_i] g (divided by W for mean), zero elsewhere.
//   d/dw[c] = sum over samples of class c of -x[i, c] g_i for sum and none, and of
//             (-x[i, c] - L) g / W for mean (W depends on w too), plus W's gradient per sample.
// PyTorch has no weight gradient; this one is exact.
std::vector<Tensor> nll_loss_derivative(const BackwardArgs& a) {
  const Tensor& input = a.inputs[0].to_tensor();
  const bool single = input.dim() == 1;
  const Tensor self = single ? input.unsqueeze(0) : input;
  const Tensor target = single ? a.inputs[1].to_tensor().reshape({1}) : a.inputs[1].to_tensor();
  const Tensor weight = a.inputs[2].to_optional_tensor();
  const Reduction reduction = reduction_arg(a.inputs[3], "nll_loss_forward");
  const bool mean = reduction == Reduction::Mean;
  const int64_t ignore_index = a.inputs[4].to_int();
  const Tensor valid = target != ignore_index;
  const Tensor safe = where(valid, target, Scalar(int64_t{0})).to(DType::Int64);
  const Tensor index = safe.unsqueeze(1);  // (N, 1, ...): the target class along dim 1
  // Per sample: the output's gradient over W for mean, zero for ignored samples.
  Tensor scale = a.grad_outputs[0] * valid;
  if (mean) scale = scale / a.outputs[1];
  const Tensor w = weight.defined()
                       ? weight.index_select(0, safe.flatten()).view(safe.sizes()).to(self.dtype())
                       : Tensor();
  const Tensor coef = -(w.defined() ? w * scale : scale).to(self.dtype());
  Tensor grad_self = zeros(self.sizes(), self.options()).scatter(1, index, coef.unsqueeze(1));
  if (single) grad_self = grad_self.squeeze(0);
  Tensor grad_weight;
  if (weight.defined()) {
    Tensor per_sample = -self.gather(1, index).squeeze(1);
    if (mean) per_sample = per_sample - a.outputs[0];
    Tensor contribution = per_sample * scale;
    // total_weight (an output too; 0 for reduction none unless the input is one sample) grows
    // by w[t_i] per valid sample.
    if (reduction != Reduction::None || single) {
      contribution = contribution + a.grad_outputs[1] * valid;
    }
    grad_weight = zeros({weight.numel()}, self.options())
                      .scatter_add(0, safe.flatten(), contribution.flatten().to(self.dtype()));
  }
  return {grad_self, Tensor(), grad_weight};
}

}  // namespace

KILN_OP(
    "nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt "
    "ignore_index) -> (Tensor output, Tensor total_weight)")
    .meta(nll_loss_forward_meta)
    .derivative(nll_loss_derivative, DerivativeReads::InputsAndOutputs)
    .decomposition([](const Stack& a) {
      nll_loss_forward_meta(a);  // the argument checks
      const bool per_element =
          reduction_arg(a[3], "nll_loss_forward") == Reduction::None && a[0].to_tensor().dim() == 2;
      return nll_decomposition(a, per_element);
    })
    .cpu([](const Stack& a, const Outs& out) {
      const Tensor& self = a[0].to_tensor();
      const Reduction r = reduction_arg(a[3], "nll_loss_forward");
      const int64_t n = self.dim() == 2 ? self.size(0) : 1;
      nll_forward(self, a[1].to_tensor(), a[2].to_optional_tensor(), r, a[4].to_int(), n,
                  self.size(-1), 1, r == Reduction::None && self.dim() == 2, out,
                  "nll_loss_forward");
    })
    .samples(nll_loss_forward_samples);

KILN_OP(
    "nll_loss2d_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt "
    "ignore_index) -> (Tensor output, Tensor total_weight)")
    .meta(nll_loss2d_forward_meta)
    .derivative(nll_loss_derivative, DerivativeReads::InputsAndOutputs)
    .decomposition([](const Stack& a) {
      nll_loss2d_forward_meta(a);  // the argument checks
      return nll_decomposition(a, reduction_arg(a[3], "nll_loss2d_forward") == Reduction::None);
    })
    .cpu([](const Stack& a, const Outs& out) {
      const Tensor& self = a[0].to_tensor();
      const Reduction r = reduction_arg(a[3], "nll_loss2d_forward");
      nll_forward(self, a[1].to_tensor(), a[2].to_optional_tensor(), r, a[4].to_int(), self.size(0),
                  self.size(1), self.size(2) * self.size(3), r == Reduction::None, out,
                  "nll_loss2d_forward");
    })
    .samples(nll_loss2d_forward_samples);

KILN_OP(
    "nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt "
    "ignore_index=-100) -> Tensor")
    .composite([](const Stack& a) {
      static const OpDef& forward = op_named("nll_loss_forward");
      return std::vector<Tensor>{call(forward, a)[0]};
    })
    .samples(nll_loss_samples);

KILN_OP(
    "nll_loss2d(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt "
    "ignore_index=-100) -> Tensor")
    .composite([](const Stack& a) {
      static const OpDef& forward = op_named("nll_loss2d_forward");
      return std::vector<Tensor>{call(forward, a)[0]};
    })
    .samples(nll_loss2d_forward_samples);

// Any rank: (C), (N, C) go to nll_loss, (N, C, H, W) to nll_loss2d, and other ranks are
// reshaped to (N, C, 1, d1 * d2 * ...) for nll_loss2d.
KILN_OP(
    "nll_loss_nd(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt "
    "ignore_index=-100) -> Tensor")
    .composite([](const Stack& a) {
      static const OpDef& nll = op_named("nll_loss");
      static const OpDef& nll2d = op_named("nll_loss2d");
      const char* name = "nll_loss_nd";
      const Tensor& self = a[0].to_tensor();
      const Tensor& target = a[1].to_tensor();
      const Reduction reduction = reduction_arg(a[3], name);
      KILN_CHECK(self.dim() >= 1, "{}: expected 1 or more dimensions (got {})", name, self.dim());
      KILN_CHECK(self.dim() == 1 || (target.dim() >= 1 && self.size(0) == target.size(0)),
                 "{}: expected input batch_size ({}) to match target batch_size ({})", name,
                 self.size(0), target.dim() >= 1 ? target.size(0) : int64_t{0});
      if (self.dim() <= 2) return call(nll, a);
      if (self.dim() == 4) return call(nll2d, a);
      const int64_t n = self.size(0), c = self.size(1);
      DimVector out_sizes{n};
      for (int64_t d = 2; d < self.dim(); ++d) out_sizes.push_back(self.size(d));
      KILN_CHECK(IntList(target.sizes()) == IntList(out_sizes),
                 "{}: expected target size {}, got {} for input of size {}", name,
                 sizes_str(out_sizes), sizes_str(target.sizes()), sizes_str(self.sizes()));
      const bool any = self.numel() > 0;
      Tensor input = self.contiguous().view(any ? DimVector{n, c, 1, -1} : DimVector{n, c, 0, 0});
      Tensor tgt = target.contiguous().view(any ? DimVector{n, 1, -1} : DimVector{n, 0, 0});
      Tensor out = call(nll2d, {input, tgt, a[2], a[3], a[4]})[0];
      if (reduction == Reduction::None) out = out.view(out_sizes);
      return std::vector<Tensor>{out};
    })
    .samples(nll_loss_nd_samples);

}  // namespace kiln::ops

namespace kiln {

Tensor nll_loss(const Tensor& input, const Tensor& target, const NllLossOptions& options,
                const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::OpRegistry::instance().get("nll_loss_nd");
  return ops::call1(op,
                    {input, target, ops::optional_tensor(options.weight),
                     ops::reduction_value(options.reduction), options.ignore_index},
                    &loc);
}

}  // namespace kiln
