// native_batch_norm (output, save_mean, save_invstd) and its composite batch_norm. Training
// normalizes with the batch's per-channel statistics and updates running_mean/running_var in
// place (momentum, unbiased variance, as PyTorch); evaluation uses the running statistics.
// A channels-last input gives a channels-last output.
#include "ops/norm/norm_backward_common.h"
#include "ops/norm/norm_kernels.h"
#include "ops/samples.h"
#include "ops/sizes_str.h"

#include <kiln/core/memory_format.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/reduction.h>
#include <kiln/ops/sym_size_ops.h>
#include <kiln/ops/unary.h>

#include <cmath>
#include <vector>

namespace kiln::ops {
namespace {

using norm::Metas;
using norm::Outs;

using norm::channels_last;

struct BatchNormArgs {
  Tensor input, weight, bias, running_mean, running_var;
  bool training;
  double momentum, eps;
};

BatchNormArgs unpack_batch_norm(const Stack& a) {
  return {a[0].to_tensor(),          a[1].to_optional_tensor(), a[2].to_optional_tensor(),
          a[3].to_optional_tensor(), a[4].to_optional_tensor(), a[5].to_bool(),
          a[6].to_double(),          a[7].to_double()};
}

// Sizes are SymInts: a symbolic input is checked with guards (the channels are static in
// practice; the batch and spatial sizes may be symbols).
void check_batch_norm(const BatchNormArgs& b) {
  const char* op = "native_batch_norm";
  norm::check_floating(b.input, op);
  KILN_CHECK(b.input.dim() >= 2,
             "{}: expected an input of at least 2 dimensions (N, C, *), but got input of shape {}",
             op, sizes_str(b.input.sym_sizes()));
  const SymInt C = b.input.sym_size(1);
  for (const auto& [param, what] :
       {std::pair{b.weight, "weight"}, std::pair{b.bias, "bias"},
        std::pair{b.running_mean, "running_mean"}, std::pair{b.running_var, "running_var"}}) {
    if (!param.defined()) continue;
    KILN_CHECK(param.dim() == 1 && param.sym_numel() == C,
               "{}: expected {} to have {} elements (the input's channels), but got shape {}", op,
               what, C.str(), sizes_str(param.sym_sizes()));
  }
  if (b.training) {
    const SymInt numel = b.input.sym_numel();
    KILN_CHECK(numel > 0,
               "{}: input tensor must have at least one element, but got input_sizes = {}", op,
               sizes_str(b.input.sym_sizes()));
    KILN_CHECK(numel / C > 1,
               "{}: Expected more than 1 value per channel when training, got input size {}", op,
               sizes_str(b.input.sym_sizes()));
  } else {
    KILN_CHECK(b.running_mean.defined() && b.running_var.defined(),
               "{}: running_mean and running_var must be defined in evaluation mode", op);
  }
}

bool mixed(const BatchNormArgs& b) {
  return norm::is_mixed(b.input, {b.weight, b.bias, b.running_mean, b.running_var});
}

Metas native_batch_norm_meta(const Stack& a) {
  const BatchNormArgs b = unpack_batch_norm(a);
  check_batch_norm(b);
  const Device dev = b.input.device();
  TensorMeta out = TensorMeta::contiguous(b.input.sym_sizes().vec(), b.input.dtype(), dev);
  if (channels_last(b.input)) {
    out.strides = strides_for_memory_format(b.input.sym_sizes(), MemoryFormat::ChannelsLast);
  }
  const SymInt stats = b.training ? b.input.sym_size(1) : SymInt(0);
  const DType sd = norm::stats_dtype(b.input, mixed(b));
  return {out, TensorMeta::contiguous({stats}, sd, dev), TensorMeta::contiguous({stats}, sd, dev)};
}

std::vector<double> as_doubles(const Tensor& t, int64_t n, double fallback) {
  std::vector<double> out(static_cast<size_t>(n), fallback);
  if (!t.defined()) return out;
  const Tensor d = norm::contiguous_as(t, DType::Float64);
  for (int64_t i = 0; i < n; ++i) out[i] = d.data_ptr<double>()[i];
  return out;
}

using norm::assign;

void native_batch_norm_impl(const Stack& a, const Outs& out) {
  const BatchNormArgs b = unpack_batch_norm(a);
  const int64_t N = b.input.size(0), C = b.input.size(1);
  if (b.input.numel() == 0) return;  // evaluation on an empty batch
  const bool cl = channels_last(b.input) || b.input.dim() == 2;
  const Tensor x = cl && b.input.dim() == 4 ? b.input.contiguous(MemoryFormat::ChannelsLast)
                                            : b.input.contiguous();
  const int64_t inner = b.input.numel() / (N * C);

  std::vector<double> mean(static_cast<size_t>(C)), invstd(static_cast<size_t>(C));
  if (b.training) {
    std::vector<double> var(static_cast<size_t>(C));
    ChannelMomentsArgs m;
    m.input = x.data_ptr();
    m.dtype = x.dtype();
    m.outer = cl ? N * inner : N;
    m.channels = C;
    m.inner = cl ? 1 : inner;
    m.channels_last = cl;
    m.mean = mean.data();
    m.var = var.data();
    channel_moments_kernels(m);
    for (int64_t c = 0; c < C; ++c) invstd[c] = 1.0 / std::sqrt(var[c] + b.eps);
    assign(out[1], mean);
    assign(out[2], invstd);
    // Running statistics take the unbiased variance (count / (count - 1)), as PyTorch does.
    const double count = static_cast<double>(N * inner);
    if (b.running_mean.defined()) {
      std::vector<double> rm = as_doubles(b.running_mean, C, 0.0);
      for (int64_t c = 0; c < C; ++c) rm[c] = (1 - b.momentum) * rm[c] + b.momentum * mean[c];
      assign(b.running_mean, rm);
    }
    if (b.running_var.defined()) {
      std::vector<double> rv = as_doubles(b.running_var, C, 1.0);
      for (int64_t c = 0; c < C; ++c) {
        rv[c] = (1 - b.momentum) * rv[c] + b.momentum * var[c] * count / (count - 1);
      }
      assign(b.running_var, rv);
    }
  } else {
    mean = as_doubles(b.running_mean, C, 0.0);
    std::vector<double> var = as_doubles(b.running_var, C, 1.0);
    for (int64_t c = 0; c < C; ++c) invstd[c] = 1.0 / std::sqrt(var[c] + b.eps);
  }

  const std::vector<double> w = as_doubles(b.weight, C, 1.0), bias = as_doubles(b.bias, C, 0.0);
  std::vector<double> scale(static_cast<size_t>(C)), shift(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) {
    scale[c] = invstd[c] * w[c];
    shift[c] = bias[c] - mean[c] * scale[c];
  }
  ChannelAffineArgs affine;
  affine.input = x.data_ptr();
  affine.out = out[0].data_ptr();
  affine.dtype = x.dtype();
  affine.outer = cl ? N * inner : N;
  affine.channels = C;
  affine.inner = cl ? 1 : inner;
  affine.channels_last = cl;
  affine.scale = scale.data();
  affine.shift = shift.data();
  channel_affine_kernels(affine);
}

// A [C] float64 parameter, or `fallback` when it is None.
Tensor channel_values(const Tensor& param, int64_t C, double fallback, Device device) {
  return param.defined() ? param.to(DType::Float64)
                         : full({C}, fallback, TensorOptions(DType::Float64).device(device));
}

// native_batch_norm in kiln ops, as the kernels compute it: per-channel statistics of the input in
// its opmath dtype, accumulated in float64 by whoever runs the sums (a float64 copy of the input
// would make the compiled statistics pass twice as wide), the per-channel arithmetic in float64,
// running statistics updated in place (copy_) with the unbiased variance, then
// y = x * scale + shift per channel, scale = invstd * weight, shift = bias - mean * scale, in the
// opmath dtype.
std::vector<Tensor> native_batch_norm_decomposition(const Stack& a) {
  const BatchNormArgs b = unpack_batch_norm(a);
  check_batch_norm(b);
  const int64_t C = b.input.sym_sizes()[1].expect_int();
  const DType sd = norm::stats_dtype(b.input, mixed(b));
  std::vector<int64_t> reduced{0};
  DimVector channel_shape(static_cast<size_t>(b.input.dim()), 1);
  channel_shape[1] = C;
  for (int64_t d = 2; d < b.input.dim(); ++d) reduced.push_back(d);
  Tensor mean, invstd, save_mean, save_invstd;
  if (b.training) {
    auto [var_acc, mean_acc] =
        var_mean(b.input.to(norm::opmath_dtype(b.input.dtype())), reduced, Scalar(0));
    const Tensor var = var_acc.to(DType::Float64);
    mean = mean_acc.to(DType::Float64);
    invstd = rsqrt(var + b.eps);
    save_mean = mean.to(sd);
    save_invstd = invstd.to(sd);
    const double m = b.momentum;
    if (b.running_mean.defined()) {
      Tensor running_mean = b.running_mean;
      running_mean.copy_(running_mean.to(DType::Float64) * (1 - m) + mean * m);
    }
    if (b.running_var.defined()) {
      // The unbiased variance's count / (count - 1), values per channel; a symbolic count is a
      // tensor counting them (a sum of ones), which a graph can record.
      Tensor unbiased = var * m;
      const SymInt numel = b.input.sym_numel();
      if (numel.is_symbolic()) {
        const Tensor count =
            numel_tensor(b.input, TensorOptions(DType::Float64).device(b.input.device())) / C;
        unbiased = unbiased * count / (count - 1);
      } else {
        const auto count = static_cast<double>(numel.raw() / C);
        unbiased = unbiased * count / (count - 1);
      }
      Tensor running_var = b.running_var;
      running_var.copy_(running_var.to(DType::Float64) * (1 - m) + unbiased);
    }
  } else {
    mean = b.running_mean.to(DType::Float64);
    invstd = rsqrt(b.running_var.to(DType::Float64) + b.eps);
    save_mean = full({0}, 0, TensorOptions(sd).device(b.input.device()));
    save_invstd = full({0}, 0, TensorOptions(sd).device(b.input.device()));
  }
  const Tensor scale = invstd * channel_values(b.weight, C, 1.0, b.input.device());
  const Tensor shift = channel_values(b.bias, C, 0.0, b.input.device()) - mean * scale;
  const DType acc = norm::opmath_dtype(b.input.dtype());
  const Tensor y =
      b.input.to(acc) * scale.to(acc).reshape(channel_shape) + shift.to(acc).reshape(channel_shape);
  return {y.to(b.input.dtype()), save_mean, save_invstd};
}

Tensor batch_norm_sample(IntList sizes, DType dtype = DType::Float32, uint64_t seed = 0,
                         double low = -3.0) {
  return make_sample(sizes, dtype, low, 3.0, seed);
}

std::vector<Sample> batch_norm_samples(bool native) {
  const DType f = DType::Float32;
  auto args = [native](Stack a) {
    if (!native) a.emplace_back(false);  // cudnn_enabled
    return a;
  };
  return {
      {args({batch_norm_sample({4, 3, 5}), batch_norm_sample({3}, f, 1),
             batch_norm_sample({3}, f, 2), batch_norm_sample({3}, f, 3),
             batch_norm_sample({3}, f, 4, 0.5), true, 0.1, 1e-5}),
       "training, affine, running stats"},
      {args({batch_norm_sample({4, 3, 5}), batch_norm_sample({3}, f, 1),
             batch_norm_sample({3}, f, 2), batch_norm_sample({3}, f, 3),
             batch_norm_sample({3}, f, 4, 0.5), false, 0.1, 1e-5}),
       "evaluation"},
      {args({batch_norm_sample({2, 3, 4, 5}).contiguous(MemoryFormat::ChannelsLast), IValue(),
             IValue(), IValue(), IValue(), true, 0.1, 1e-5}),
       "channels last, no affine"},
      {args({batch_norm_sample({6, 4}), batch_norm_sample({4}, f, 1), IValue(), IValue(), IValue(),
             true, 0.3, 1e-3}),
       "2-D, weight only"},
      {args({make_noncontiguous_sample({3, 2, 4}, f), IValue(), batch_norm_sample({2}, f, 2),
             batch_norm_sample({2}, f, 3), batch_norm_sample({2}, f, 4, 0.5), true, 0.1, 1e-5}),
       "non-contiguous"},
      {args({batch_norm_sample({3, 2, 4}, DType::Float64),
             batch_norm_sample({2}, DType::Float64, 1), batch_norm_sample({2}, DType::Float64, 2),
             IValue(), IValue(), true, 0.1, 1e-5}),
       "float64"},
      {args({batch_norm_sample({3, 2, 4}, DType::BFloat16), IValue(), IValue(), IValue(), IValue(),
             true, 0.1, 1e-5}),
       "bfloat16"},
      {args({batch_norm_sample({0, 3, 2}), IValue(), IValue(), batch_norm_sample({3}, f, 3),
             batch_norm_sample({3}, f, 4, 0.5), false, 0.1, 1e-5}),
       "evaluation, empty batch"},
  };
}

// _native_batch_norm_functional (PyTorch's _native_batch_norm_legit_functional): native_batch_norm
// returning the updated running statistics instead of writing them, what functionalization turns
// native_batch_norm into. The kernel updates copies; an undefined statistic stays undefined.
Metas native_batch_norm_functional_meta(const Stack& a) {
  Metas metas = native_batch_norm_meta(a);
  for (size_t i : {3u, 4u}) {
    const Tensor stat = a[i].to_optional_tensor();
    metas.push_back(
        stat.defined()
            ? TensorMeta::contiguous(SymDimVector(stat.sym_sizes().begin(), stat.sym_sizes().end()),
                                     stat.dtype(), stat.device())
            : TensorMeta::contiguous({0}, a[0].to_tensor().dtype(), a[0].to_tensor().device()));
  }
  return metas;
}

void native_batch_norm_functional_impl(const Stack& a, const Outs& out) {
  Stack updated = a;
  for (size_t i : {3u, 4u}) {
    const Tensor stat = a[i].to_optional_tensor();
    if (!stat.defined()) continue;
    Tensor copy = out[i];
    copy.copy_(stat);
    updated[i] = IValue(copy);
  }
  native_batch_norm_impl(updated, Outs{out[0], out[1], out[2]});
}

// native_batch_norm's formula for the first three outputs, plus the updated statistics' terms:
// in training new_mean = (1 - m) running_mean + m mean(x) and new_var = (1 - m) running_var +
// m var(x) n / (n - 1); in evaluation they are copies.
std::vector<Tensor> native_batch_norm_functional_derivative(const BackwardArgs& a) {
  const std::vector<Tensor> outputs(a.outputs.begin(), a.outputs.begin() + 3);
  const std::vector<Tensor> grads(a.grad_outputs.begin(), a.grad_outputs.begin() + 3);
  std::vector<bool> flowed;
  for (size_t i = 0; i < 3; ++i) flowed.push_back(a.flowed(i));
  std::vector<Tensor> g = norm::native_batch_norm_derivative(
      BackwardArgs{a.inputs, outputs, grads, &flowed, a.needs_grad_mask});
  const bool mean_flowed = a.flowed(3), var_flowed = a.flowed(4);
  if (!mean_flowed && !var_flowed) return g;
  const BatchNormArgs b = unpack_batch_norm(a.inputs);
  auto add = [](Tensor& into, const Tensor& term) { into = into.defined() ? into + term : term; };
  if (!b.training) {
    if (mean_flowed && b.running_mean.defined()) add(g[3], a.grad_outputs[3]);
    if (var_flowed && b.running_var.defined()) add(g[4], a.grad_outputs[4]);
    return g;
  }
  const double m = b.momentum;
  const int64_t C = b.input.size(1);
  const double count = static_cast<double>(b.input.numel() / C);
  DimVector channel_shape(static_cast<size_t>(b.input.dim()), 1);
  channel_shape[1] = C;
  if (mean_flowed && b.running_mean.defined()) {
    const Tensor& gm = a.grad_outputs[3];
    add(g[3], gm * (1 - m));
    add(g[0],
        (gm * (m / count)).reshape(channel_shape).to(b.input.dtype()).expand(b.input.sizes()));
  }
  if (var_flowed && b.running_var.defined()) {
    const Tensor& gv = a.grad_outputs[4];
    add(g[4], gv * (1 - m));
    const Tensor centered = b.input - a.outputs[1].reshape(channel_shape).to(b.input.dtype());
    add(g[0], centered * (gv * (2 * m / (count - 1))).reshape(channel_shape).to(b.input.dtype()));
  }
  return g;
}

std::vector<Tensor> native_batch_norm_functional_decomposition(const Stack& a) {
  static const OpDef& native = OpRegistry::instance().get("native_batch_norm");
  Stack updated = a;
  std::vector<Tensor> stats;
  for (size_t i : {3u, 4u}) {
    const Tensor stat = a[i].to_optional_tensor();
    stats.push_back(
        stat.defined()
            ? stat.clone()
            : empty({0},
                    TensorOptions(a[0].to_tensor().dtype()).device(a[0].to_tensor().device())));
    if (stat.defined()) updated[i] = IValue(stats.back());
  }
  std::vector<Tensor> out = call(native, updated);
  out.push_back(stats[0]);
  out.push_back(stats[1]);
  return out;
}

}  // namespace

KILN_OP(
    "native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!)? running_mean, "
    "Tensor(b!)? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, "
    "Tensor)")
    .meta(native_batch_norm_meta)
    .cpu(native_batch_norm_impl)
    .derivative(norm::native_batch_norm_derivative, DerivativeReads::InputsAndOutputs, {1, 2})
    .decomposition(native_batch_norm_decomposition)
    .tolerance(1e-5, 1e-5)
    .samples([] { return batch_norm_samples(true); });

KILN_OP(
    "_native_batch_norm_functional(Tensor input, Tensor? weight, Tensor? bias, Tensor? "
    "running_mean, Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, "
    "Tensor, Tensor, Tensor, Tensor)")
    .meta(native_batch_norm_functional_meta)
    .cpu(native_batch_norm_functional_impl)
    .derivative(native_batch_norm_functional_derivative, DerivativeReads::InputsAndOutputs, {1, 2})
    .decomposition(native_batch_norm_functional_decomposition)
    .tolerance(1e-5, 1e-5)
    .samples([] { return batch_norm_samples(true); });

KILN_OP(
    "batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? "
    "running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor")
    .composite([](const Stack& a) {
      static const OpDef& native = OpRegistry::instance().get("native_batch_norm");
      return Outs{call(native, {a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]})[0]};
    })
    .tolerance(1e-5, 1e-5)
    .samples([] { return batch_norm_samples(false); });

}  // namespace kiln::ops
