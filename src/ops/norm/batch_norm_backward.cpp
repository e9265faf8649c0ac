// native_batch_norm_backward (aten's schema): per-channel sums of grad_out and
// grad_out * (input - mean) in one pass, then grad_input as a per-channel affine map of grad_out
// and input in a second (norm_backward.kernel.cpp); a channels-last input keeps its layout.
// Training reads save_mean/save_invstd, evaluation the running statistics. The decomposition in
// kiln ops gives double backward and is the kernel's reference.
#include "ops/norm/norm_backward_common.h"
#include "ops/norm/norm_backward_kernels.h"
#include "ops/samples.h"
#include "ops/view/view_utils.h"

#include <kiln/core/memory_format.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/norm.h>
#include <kiln/ops/sym_size_ops.h>
#include <kiln/ops/unary.h>

#include <cmath>

namespace kiln::ops {
namespace {

using norm::MaybeMetas;
using norm::Outs;

constexpr const char* kBatchNormBackward = "native_batch_norm_backward";

struct BatchNormBackwardArgs {
  Tensor grad_out, input, weight, running_mean, running_var, save_mean, save_invstd;
  bool train;
  double eps;
  std::array<bool, 3> mask;
};

BatchNormBackwardArgs unpack_batch_norm_backward(const Stack& a) {
  return {a[0].to_tensor(),          a[1].to_tensor(),
          a[2].to_optional_tensor(), a[3].to_optional_tensor(),
          a[4].to_optional_tensor(), a[5].to_optional_tensor(),
          a[6].to_optional_tensor(), a[7].to_bool(),
          a[8].to_double(),          norm::output_mask(a[9])};
}

using norm::channels_last;

MaybeMetas metas(const BatchNormBackwardArgs& b) {
  norm::check_floating(b.input, kBatchNormBackward);
  const SymIntList sizes = b.input.sym_sizes();
  KILN_CHECK(b.input.dim() >= 2, "{}: expected an input of at least 2 dimensions, but got {}",
             kBatchNormBackward, view_detail::shape_str(sizes));
  KILN_CHECK(b.grad_out.sym_sizes() == sizes,
             "{}: expected grad_out of the input's shape {}, but got {}", kBatchNormBackward,
             view_detail::shape_str(sizes), view_detail::shape_str(b.grad_out.sym_sizes()));
  // Channels are a plain size (the batch and spatial sizes may be symbolic).
  const int64_t C = sizes[1].expect_int();
  const Tensor& mean = b.train ? b.save_mean : b.running_mean;
  const Tensor& var = b.train ? b.save_invstd : b.running_var;
  KILN_CHECK(mean.defined() && var.defined() && mean.numel() == C && var.numel() == C,
             "{}: expected {} of {} elements (the input's channels)", kBatchNormBackward,
             b.train ? "save_mean and save_invstd" : "running_mean and running_var", C);
  const Device dev = b.input.device();
  MaybeMetas m;
  if (b.mask[0]) {
    TensorMeta g = TensorMeta::contiguous(sizes.vec(), b.input.dtype(), dev);
    if (channels_last(b.input)) {
      g.strides = strides_for_memory_format(sizes, MemoryFormat::ChannelsLast);
    }
    m[0] = g;
  }
  const DType pd = b.weight.defined() ? b.weight.dtype() : b.input.dtype();
  if (b.mask[1]) m[1] = norm::channel_meta(C, pd, dev);
  if (b.mask[2]) m[2] = norm::channel_meta(C, pd, dev);
  return m;
}

using norm::assign;

Outs batch_norm_backward_cpu(const Stack& a) {
  const BatchNormBackwardArgs b = unpack_batch_norm_backward(a);
  Outs out = norm::allocate(metas(b));
  const int64_t N = b.input.size(0), C = b.input.size(1);
  const int64_t inner = N * C == 0 ? 0 : b.input.numel() / (N * C);
  const double count = static_cast<double>(N * inner);
  const bool cl = channels_last(b.input) || b.input.dim() == 2;
  const MemoryFormat fmt =
      cl && b.input.dim() == 4 ? MemoryFormat::ChannelsLast : MemoryFormat::Contiguous;
  const Tensor x = b.input.contiguous(fmt);
  const Tensor dy = norm::contiguous_as(b.grad_out, b.input.dtype()).contiguous(fmt);

  std::vector<double> mean, invstd;
  if (b.train) {
    mean = norm::as_doubles(b.save_mean, C, 0.0);
    invstd = norm::as_doubles(b.save_invstd, C, 1.0);
  } else {
    mean = norm::as_doubles(b.running_mean, C, 0.0);
    invstd = norm::as_doubles(b.running_var, C, 1.0);
    for (double& v : invstd) v = 1.0 / std::sqrt(v + b.eps);
  }
  const std::vector<double> w = norm::as_doubles(b.weight, C, 1.0);
  const bool need_sums = b.mask[1] || b.mask[2] || (b.mask[0] && b.train);
  std::vector<double> sum_dy(static_cast<size_t>(C), 0.0), sum_dy_xmu(static_cast<size_t>(C), 0.0);
  auto layout = [&](auto& k) {
    k.dtype = x.dtype();
    k.outer = cl ? N * inner : N;
    k.channels = C;
    k.inner = cl ? 1 : inner;
    k.channels_last = cl;
  };
  if (need_sums && x.numel() > 0) {
    ChannelGradSumsArgs k;
    k.grad_out = dy.data_ptr();
    k.input = x.data_ptr();
    layout(k);
    k.center = mean.data();
    k.sum_dy = sum_dy.data();
    k.sum_dy_xc = sum_dy_xmu.data();
    channel_grad_sums_kernels(k);
  }
  if (out[0].defined() && x.numel() > 0) {
    std::vector<double> ka(static_cast<size_t>(C)), kb(static_cast<size_t>(C), 0.0),
        kd(static_cast<size_t>(C), 0.0);
    for (int64_t c = 0; c < C; ++c) {
      ka[c] = invstd[c] * w[c];
      if (b.train) {
        // dx = (dy - sum_dy / n - (x - mean) * invstd^2 * sum_dy_xmu / n) * invstd * w
        const double proj = sum_dy_xmu[c] * invstd[c] * invstd[c] / count;
        kb[c] = -proj * ka[c];
        kd[c] = (mean[c] * proj - sum_dy[c] / count) * ka[c];
      }
    }
    ChannelGradInputArgs k;
    k.grad_out = dy.data_ptr();
    k.input = b.train ? x.data_ptr() : nullptr;
    k.grad_input = out[0].data_ptr();
    layout(k);
    k.a = ka.data();
    k.b = kb.data();
    k.d = kd.data();
    channel_grad_input_kernels(k);
  }
  if (out[1].defined()) {
    std::vector<double> dw(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) dw[c] = sum_dy_xmu[c] * invstd[c];
    assign(out[1], dw);
  }
  if (out[2].defined()) assign(out[2], sum_dy);
  return out;
}

// The same in kiln ops, over the dims other than channels: element-wise work in the opmath dtype
// (float32 for float32, as PyTorch's CPU kernel), the per-channel sums accumulated in float64 by
// whoever runs them (the kernel, the inductor's sums). Float64 element-wise math would make every
// compiled batch-norm backward pass twice as wide as eager's.
std::vector<Tensor> batch_norm_backward_decomposition(const Stack& a) {
  const BatchNormBackwardArgs b = unpack_batch_norm_backward(a);
  const MaybeMetas m = metas(b);
  const int64_t C = b.input.sym_sizes()[1].expect_int();
  std::vector<int64_t> dims{0}, shape(static_cast<size_t>(b.input.dim()), 1);
  for (int64_t d = 2; d < b.input.dim(); ++d) dims.push_back(d);
  shape[1] = C;
  const DType acc = norm::opmath_dtype(b.input.dtype());
  // Divided by the values per channel; a symbolic count is a tensor counting them (a sum of
  // ones), which a graph can record.
  const SymInt numel = b.input.sym_numel();
  auto over_count = [&](const Tensor& t) {
    if (numel.is_symbolic()) return t / (numel_tensor(b.input, TensorOptions(acc)) / C);
    return t / static_cast<double>(C == 0 ? 0 : numel.raw() / C);
  };
  auto per_channel = [&](const Tensor& t) { return t.to(acc).reshape(shape); };
  const Tensor mean = per_channel(b.train ? b.save_mean : b.running_mean);
  const Tensor invstd = b.train
                            ? per_channel(b.save_invstd)
                            : per_channel(kiln::rsqrt(b.running_var.to(DType::Float64) + b.eps));
  const Tensor dy = b.grad_out.to(acc);
  const Tensor xmu = b.input.to(acc) - mean;
  const Tensor sum_dy = dy.sum(dims);
  const Tensor sum_dy_xmu = (dy * xmu).sum(dims);
  const Tensor scale = b.weight.defined() ? invstd * per_channel(b.weight) : invstd;
  Outs out(3);
  if (m[0]) {
    Tensor g = dy;
    if (b.train) {
      g = g - over_count(per_channel(sum_dy)) -
          over_count(xmu * invstd * invstd * per_channel(sum_dy_xmu));
    }
    out[0] = (g * scale)
                 .to(b.input.dtype())
                 .contiguous(channels_last(b.input) ? MemoryFormat::ChannelsLast
                                                    : MemoryFormat::Contiguous);
  }
  if (m[1]) out[1] = (sum_dy_xmu * invstd.reshape({C})).to(m[1]->dtype);
  if (m[2]) out[2] = sum_dy.to(m[2]->dtype);
  return out;
}

Tensor batch_norm_backward_sample(IntList sizes, DType dtype = DType::Float32, uint64_t seed = 0,
                                  double low = -2.0) {
  return make_sample(sizes, dtype, low, 2.0, seed);
}

Stack batch_norm_backward_args(const Tensor& input, const Tensor& weight, bool train,
                               IntList mask) {
  const int64_t C = input.size(1);
  const DType pd = weight.defined() ? weight.dtype() : input.dtype();
  Tensor rm = batch_norm_backward_sample({C}, pd, 3),
         rv = batch_norm_backward_sample({C}, pd, 4, 0.5);
  auto [y, save_mean, save_invstd] =
      native_batch_norm(input, weight, Tensor(), rm.clone(), rv.clone(), train, 0.1, 1e-5);
  return {batch_norm_backward_sample(input.sizes(), input.dtype(), 11)
              .contiguous(input.suggest_memory_format()),
          input,
          norm::optional_arg(weight),
          rm,
          rv,
          train ? IValue(save_mean) : IValue(),
          train ? IValue(save_invstd) : IValue(),
          train,
          1e-5,
          mask};
}

std::vector<Sample> batch_norm_backward_samples() {
  const DType f = DType::Float32;
  return {
      {batch_norm_backward_args(batch_norm_backward_sample({4, 3, 5}),
                                batch_norm_backward_sample({3}, f, 1), true, IntList{1, 1, 1}),
       "training, weight"},
      {batch_norm_backward_args(batch_norm_backward_sample({4, 3, 5}),
                                batch_norm_backward_sample({3}, f, 1), false, IntList{1, 1, 1}),
       "evaluation"},
      {batch_norm_backward_args(
           batch_norm_backward_sample({2, 3, 4, 5}).contiguous(MemoryFormat::ChannelsLast),
           Tensor(), true, IntList{1, 1, 1}),
       "channels last, no weight"},
      {batch_norm_backward_args(
           batch_norm_backward_sample({2, 19, 3, 3}).contiguous(MemoryFormat::ChannelsLast),
           batch_norm_backward_sample({19}, f, 1), false, IntList{1, 0, 0}),
       "channels last, evaluation, grad_input only"},
      {batch_norm_backward_args(batch_norm_backward_sample({6, 4}),
                                batch_norm_backward_sample({4}, f, 1), true, IntList{1, 1, 0}),
       "2-D"},
      {batch_norm_backward_args(batch_norm_backward_sample({3, 2, 70}),
                                batch_norm_backward_sample({2}, f, 1), true, IntList{0, 1, 1}),
       "parameters only"},
      {batch_norm_backward_args(batch_norm_backward_sample({3, 2, 4}, DType::Float64),
                                batch_norm_backward_sample({2}, DType::Float64, 1), true,
                                IntList{1, 1, 1}),
       "float64"},
      {batch_norm_backward_args(batch_norm_backward_sample({3, 2, 4}, DType::BFloat16), Tensor(),
                                true, IntList{1, 1, 1}),
       "bfloat16"},
  };
}

}  // namespace

KILN_OP(
    "native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? "
    "running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float "
    "eps, bool[3] output_mask) -> (Tensor, Tensor, Tensor)")
    .custom(DeviceType::CPU, batch_norm_backward_cpu)
    .custom(DeviceType::Meta,
            [](const Stack& a) { return norm::meta_outputs(metas(unpack_batch_norm_backward(a))); })
    .decomposition(batch_norm_backward_decomposition)
    .tolerance(1e-4, 1e-5)
    .samples(batch_norm_backward_samples);

}  // namespace kiln::ops
