// native_group_norm_backward (aten's schema): per-(sample, channel) sums of grad_out and
// grad_out * input, combined per group into grad_input = w * rstd * dy + c2 * x + c3 (aten's
// formula) and per-channel grad_weight/grad_bias (norm_backward.kernel.cpp). The decomposition in
// kiln ops gives double backward and is the kernel's reference.
#include "ops/norm/norm_backward_common.h"
#include "ops/norm/norm_backward_kernels.h"
#include "ops/samples.h"

#include <kiln/core/memory_format.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/norm.h>

namespace kiln::ops {
namespace {

using norm::MaybeMetas;
using norm::Outs;

constexpr const char* kGroupNormBackward = "native_group_norm_backward";

struct GroupNormBackwardArgs {
  Tensor grad_out, input, mean, rstd, weight;
  int64_t N, C, HxW, group;
  std::array<bool, 3> mask;
};

GroupNormBackwardArgs unpack_group_norm_backward(const Stack& a) {
  return {a[0].to_tensor(),
          a[1].to_tensor(),
          a[2].to_tensor(),
          a[3].to_tensor(),
          a[4].to_optional_tensor(),
          a[5].to_int(),
          a[6].to_int(),
          a[7].to_int(),
          a[8].to_int(),
          norm::output_mask(a[9])};
}

MaybeMetas metas(const GroupNormBackwardArgs& b) {
  norm::check_floating(b.input, kGroupNormBackward);
  KILN_CHECK(b.input.numel() == b.N * b.C * b.HxW && b.grad_out.sizes() == b.input.sizes(),
             "{}: expected input and grad_out of {} elements (N={} * C={} * HxW={}) and one "
             "shape, but got [{}] and [{}]",
             kGroupNormBackward, b.N * b.C * b.HxW, b.N, b.C, b.HxW,
             fmt::join(b.input.sizes(), ", "), fmt::join(b.grad_out.sizes(), ", "));
  KILN_CHECK(b.group > 0 && b.C % b.group == 0,
             "{}: expected num_groups dividing the {} channels, but got {}", kGroupNormBackward,
             b.C, b.group);
  KILN_CHECK(b.mean.numel() == b.N * b.group && b.rstd.numel() == b.N * b.group,
             "{}: expected mean and rstd of N * group = {} elements, but got {} and {}",
             kGroupNormBackward, b.N * b.group, b.mean.numel(), b.rstd.numel());
  const Device dev = b.input.device();
  MaybeMetas m;
  if (b.mask[0]) {
    TensorMeta g = TensorMeta::contiguous(norm::sym(b.input.sizes()), b.input.dtype(), dev);
    if (b.input.dim() == 4 && b.input.suggest_memory_format() == MemoryFormat::ChannelsLast) {
      g.strides = norm::sym(strides_for_memory_format(b.input.sizes(), MemoryFormat::ChannelsLast));
    }
    m[0] = g;
  }
  const DType pd = b.weight.defined() ? b.weight.dtype() : b.input.dtype();
  if (b.mask[1]) m[1] = norm::channel_meta(b.C, pd, dev);
  if (b.mask[2]) m[2] = norm::channel_meta(b.C, pd, dev);
  return m;
}

Outs group_norm_backward_cpu(const Stack& a) {
  const GroupNormBackwardArgs b = unpack_group_norm_backward(a);
  Outs out = norm::allocate(metas(b));
  const int64_t N = b.N, C = b.C, HxW = b.HxW, G = b.group, D = C / G;
  const Tensor x = b.input.contiguous();
  const Tensor dy = norm::contiguous_as(b.grad_out, b.input.dtype());
  // Per (sample, channel): sum of dy and of dy * x.
  std::vector<double> s_dy(static_cast<size_t>(N * C), 0.0), s_dyx(static_cast<size_t>(N * C), 0.0);
  if (x.numel() > 0) {
    ChannelGradSumsArgs k;
    k.grad_out = dy.data_ptr();
    k.input = x.data_ptr();
    k.dtype = x.dtype();
    k.outer = 1;
    k.channels = N * C;
    k.inner = HxW;
    k.sum_dy = s_dy.data();
    k.sum_dy_xc = s_dyx.data();
    channel_grad_sums_kernels(k);
  }
  const std::vector<double> mean = norm::as_doubles(b.mean, N * G, 0.0),
                            rstd = norm::as_doubles(b.rstd, N * G, 1.0);
  const std::vector<double> w = norm::as_doubles(b.weight, C, 1.0);
  if (out[0].defined() && x.numel() > 0) {
    std::vector<double> ka(static_cast<size_t>(N * C)), kb(ka.size()), kd(ka.size());
    const double inv = 1.0 / static_cast<double>(D * HxW);
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t g = 0; g < G; ++g) {
        double ds = 0, db = 0;
        for (int64_t c = g * D; c < (g + 1) * D; ++c) {
          ds += s_dyx[n * C + c] * w[c];
          db += s_dy[n * C + c] * w[c];
        }
        const double m = mean[n * G + g], r = rstd[n * G + g];
        const double c2 = (db * m - ds) * r * r * r * inv;
        const double c3 = -c2 * m - db * r * inv;
        for (int64_t c = g * D; c < (g + 1) * D; ++c) {
          ka[n * C + c] = w[c] * r;
          kb[n * C + c] = c2;
          kd[n * C + c] = c3;
        }
      }
    }
    const bool direct = out[0].is_contiguous();
    const Tensor gi = direct ? out[0] : empty(b.input.sizes(), TensorOptions(b.input.dtype()));
    ChannelGradInputArgs k;
    k.grad_out = dy.data_ptr();
    k.input = x.data_ptr();
    k.grad_input = gi.data_ptr();
    k.dtype = x.dtype();
    k.outer = 1;
    k.channels = N * C;
    k.inner = HxW;
    k.a = ka.data();
    k.b = kb.data();
    k.d = kd.data();
    channel_grad_input_kernels(k);
    if (!direct) out[0].copy_(gi);
  }
  if (out[1].defined()) {
    std::vector<double> dw(static_cast<size_t>(C), 0.0);
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t c = 0; c < C; ++c) {
        const int64_t ng = n * G + c / D;
        dw[c] += (s_dyx[n * C + c] - s_dy[n * C + c] * mean[ng]) * rstd[ng];
      }
    }
    norm::assign(out[1], dw);
  }
  if (out[2].defined()) {
    std::vector<double> db(static_cast<size_t>(C), 0.0);
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t c = 0; c < C; ++c) db[c] += s_dy[n * C + c];
    }
    norm::assign(out[2], db);
  }
  return out;
}

// The same in kiln ops on the [N, G, C/G, HxW] view, in float64 as the kernel accumulates.
std::vector<Tensor> group_norm_backward_decomposition(const Stack& a) {
  const GroupNormBackwardArgs b = unpack_group_norm_backward(a);
  const MaybeMetas m = metas(b);
  const int64_t G = b.group, D = b.C / b.group;
  const std::vector<int64_t> v4{b.N, G, D, b.HxW};
  const DType f64 = DType::Float64;
  const Tensor x = b.input.to(f64).reshape(v4), dy = b.grad_out.to(f64).reshape(v4);
  const Tensor mean = b.mean.to(f64).reshape({b.N, G, 1, 1});
  const Tensor rstd = b.rstd.to(f64).reshape({b.N, G, 1, 1});
  const Tensor xhat = (x - mean) * rstd;
  Outs out(3);
  if (m[0]) {
    const Tensor g = b.weight.defined() ? dy * b.weight.to(f64).reshape({1, G, D, 1}) : dy;
    const double count = static_cast<double>(D * b.HxW);
    const Tensor mean_g = g.sum({2, 3}, true) / count;
    const Tensor mean_gx = (g * xhat).sum({2, 3}, true) / count;
    const Tensor dx = rstd * (g - mean_g - xhat * mean_gx);
    out[0] = dx.reshape(b.input.sizes())
                 .to(b.input.dtype())
                 .contiguous(b.input.dim() == 4 ? b.input.suggest_memory_format()
                                                : MemoryFormat::Contiguous);
  }
  if (m[1]) out[1] = (dy * xhat).sum({0, 3}).reshape({b.C}).to(m[1]->dtype);
  if (m[2]) out[2] = dy.sum({0, 3}).reshape({b.C}).to(m[2]->dtype);
  return out;
}

Tensor group_norm_backward_sample(IntList sizes, DType dtype = DType::Float32, uint64_t seed = 0) {
  return make_sample(sizes, dtype, -2.0, 2.0, seed);
}

Stack group_norm_backward_args(const Tensor& input, const Tensor& weight, int64_t group,
                               IntList mask) {
  const int64_t N = input.size(0), C = input.size(1);
  const int64_t HxW = N * C == 0 ? 0 : input.numel() / (N * C);
  auto [y, mean, rstd] = native_group_norm(input, weight, Tensor(), N, C, HxW, group, 1e-5);
  return {group_norm_backward_sample(input.sizes(), input.dtype(), 11)
              .contiguous(input.suggest_memory_format()),
          input,
          mean,
          rstd,
          norm::optional_arg(weight),
          N,
          C,
          HxW,
          group,
          mask};
}

std::vector<Sample> group_norm_backward_samples() {
  const DType f = DType::Float32;
  return {
      {group_norm_backward_args(group_norm_backward_sample({2, 6, 5}),
                                group_norm_backward_sample({6}, f, 1), 3, IntList{1, 1, 1}),
       "3 groups, weight"},
      {group_norm_backward_args(group_norm_backward_sample({2, 4, 3, 3}), Tensor(), 2,
                                IntList{1, 1, 1}),
       "4-D, no weight"},
      {group_norm_backward_args(
           group_norm_backward_sample({2, 4, 3, 3}).contiguous(MemoryFormat::ChannelsLast),
           group_norm_backward_sample({4}, f, 1), 4, IntList{1, 0, 0}),
       "channels last, grad_input only"},
      {group_norm_backward_args(group_norm_backward_sample({3, 4, 40}),
                                group_norm_backward_sample({4}, f, 1), 1, IntList{0, 1, 1}),
       "parameters only"},
      {group_norm_backward_args(group_norm_backward_sample({3, 4}, DType::Float64),
                                group_norm_backward_sample({4}, DType::Float64, 1), 2,
                                IntList{1, 1, 1}),
       "float64"},
  };
}

}  // namespace

KILN_OP(
    "native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, Tensor? "
    "weight, SymInt N, SymInt C, SymInt HxW, int group, bool[3] output_mask) -> (Tensor, Tensor, "
    "Tensor)")
    .custom(DeviceType::CPU, group_norm_backward_cpu)
    .custom(DeviceType::Meta,
            [](const Stack& a) { return norm::meta_outputs(metas(unpack_group_norm_backward(a))); })
    .decomposition(group_norm_backward_decomposition)
    .tolerance(1e-4, 1e-5)
    .samples(group_norm_backward_samples);

}  // namespace kiln::ops
