// native_group_norm (output, mean, rstd per (sample, group)) and its composite group_norm.
// Each (sample, group) is a contiguous row of C/G * HxW values: the row kernel normalizes it,
// then the per-channel affine map applies weight and bias.
#include "ops/norm/norm_backward_common.h"
#include "ops/norm/norm_kernels.h"
#include "ops/samples.h"

#include <kiln/core/memory_format.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/reduction.h>
#include <kiln/ops/unary.h>

#include <limits>
#include <vector>

namespace kiln::ops {
namespace {

using norm::Metas;
using norm::Outs;

using norm::channels_last;

void check_groups(const Tensor& input, int64_t C, int64_t group, const Tensor& weight,
                  const Tensor& bias, const char* op) {
  KILN_CHECK(group > 0, "{}: expected num_groups to be positive, but got num_groups={}", op, group);
  KILN_CHECK(C % group == 0,
             "{}: expected number of channels in input to be divisible by num_groups, but got "
             "input of shape [{}] and num_groups={}",
             op, fmt::join(input.sizes(), ", "), group);
  for (const auto& [param, what] : {std::pair{weight, "weight"}, std::pair{bias, "bias"}}) {
    if (!param.defined()) continue;
    KILN_CHECK(param.dim() == 1 && param.numel() == C,
               "{}: expected {} to be a vector of size equal to the number of channels in input, "
               "but got {} of shape [{}] and input of shape [{}]",
               op, what, what, fmt::join(param.sizes(), ", "), fmt::join(input.sizes(), ", "));
  }
}

void finish_affine(const Tensor& y, const Tensor& weight, const Tensor& bias, int64_t N, int64_t C,
                   int64_t HxW);

Metas native_group_norm_meta(const Stack& a) {
  const Tensor& input = a[0].to_tensor();
  const Tensor weight = a[1].to_optional_tensor(), bias = a[2].to_optional_tensor();
  const int64_t N = a[3].to_int(), C = a[4].to_int(), HxW = a[5].to_int(), group = a[6].to_int();
  norm::check_floating(input, "native_group_norm");
  KILN_CHECK(input.numel() == N * C * HxW,
             "native_group_norm: expected input of {} elements (N={} * C={} * HxW={}), but got "
             "input of shape [{}]",
             N * C * HxW, N, C, HxW, fmt::join(input.sizes(), ", "));
  check_groups(input, C, group, weight, bias, "native_group_norm");
  const DType sd = norm::stats_dtype(input, norm::is_mixed(input, {weight, bias}));
  TensorMeta out = TensorMeta::contiguous(norm::sym(input.sizes()), input.dtype(), input.device());
  if (channels_last(input)) {
    out.strides = norm::sym(strides_for_memory_format(input.sizes(), MemoryFormat::ChannelsLast));
  }
  return {out, TensorMeta::contiguous({N, group}, sd, input.device()),
          TensorMeta::contiguous({N, group}, sd, input.device())};
}

void native_group_norm_impl(const Stack& a, const Outs& out) {
  const Tensor& input = a[0].to_tensor();
  const Tensor weight = a[1].to_optional_tensor(), bias = a[2].to_optional_tensor();
  const int64_t N = a[3].to_int(), C = a[4].to_int(), HxW = a[5].to_int(), group = a[6].to_int();
  if (N == 0) return;
  const Tensor x = input.contiguous();
  // Groups are contiguous rows in the (N, C, HxW) layout: a channels-last output is computed
  // there and copied into place.
  const Tensor y = out[0].is_contiguous() ? out[0] : empty(input.sizes(), input.dtype());
  RowNormArgs rows;
  rows.input = x.data_ptr();
  rows.out = y.data_ptr();
  rows.mean = out[1].data_ptr();
  rows.rstd = out[2].data_ptr();
  rows.rows = N * group;
  rows.cols = C / group * HxW;
  rows.eps = a[7].to_double();
  rows.dtype = input.dtype();
  rows.mixed = norm::is_mixed(input, {weight, bias});
  row_norm_kernels(rows);
  finish_affine(y, weight, bias, N, C, HxW);
  if (!y.is_same(out[0])) Tensor(out[0]).copy_(y);
}

// Applies weight and bias per channel to the normalized (N, C, HxW) values in y, in place.
void finish_affine(const Tensor& y, const Tensor& weight, const Tensor& bias, int64_t N, int64_t C,
                   int64_t HxW) {
  if ((!weight.defined() && !bias.defined()) || HxW == 0) return;
  const Tensor w = norm::contiguous_as(weight, DType::Float64);
  const Tensor b = norm::contiguous_as(bias, DType::Float64);
  std::vector<double> scale(static_cast<size_t>(C), 1.0), shift(static_cast<size_t>(C), 0.0);
  for (int64_t c = 0; c < C; ++c) {
    if (w.defined()) scale[c] = w.data_ptr<double>()[c];
    if (b.defined()) shift[c] = b.data_ptr<double>()[c];
  }
  ChannelAffineArgs affine;
  affine.input = y.data_ptr();
  affine.out = y.data_ptr();
  affine.dtype = y.dtype();
  affine.outer = N;
  affine.channels = C;
  affine.inner = HxW;
  affine.scale = scale.data();
  affine.shift = shift.data();
  channel_affine_kernels(affine);
}

// native_group_norm in kiln ops, as the kernels compute it: each (sample, group) row of
// C / group * HxW values normalized in the opmath dtype and stored in the input's dtype, then
// weight and bias applied per channel.
std::vector<Tensor> native_group_norm_decomposition(const Stack& a) {
  native_group_norm_meta(a);  // the argument checks
  const Tensor& input = a[0].to_tensor();
  const Tensor weight = a[1].to_optional_tensor(), bias = a[2].to_optional_tensor();
  const int64_t N = a[3].to_int(), C = a[4].to_int(), HxW = a[5].to_int(), group = a[6].to_int();
  const DType sd = norm::stats_dtype(input, norm::is_mixed(input, {weight, bias}));
  const DType acc = norm::opmath_dtype(input.dtype());
  const int64_t cols = C / group * HxW;
  if (cols == 0) {  // rows of zero columns: mean 0, rstd NaN (the row kernel's convention)
    return {full(input.sizes(), 0, input.dtype()), full({N, group}, 0, sd),
            full({N, group}, std::numeric_limits<double>::quiet_NaN(), sd)};
  }
  const Tensor x = input.to(acc).reshape({N, group, cols});
  auto [var, mean] = var_mean(x, {2}, Scalar(0), /*keepdim=*/true);
  const Tensor rstd = rsqrt(var + a[7].to_double());
  Tensor y = ((x - mean) * rstd).to(input.dtype());
  if (weight.defined() || bias.defined()) {
    Tensor affine = y.to(acc).reshape({N, C, HxW});
    if (weight.defined()) affine = affine * weight.to(acc).reshape({1, C, 1});
    if (bias.defined()) affine = affine + bias.to(acc).reshape({1, C, 1});
    y = affine.to(input.dtype());
  }
  return {y.reshape(input.sizes()), mean.reshape({N, group}).to(sd),
          rstd.reshape({N, group}).to(sd)};
}

Tensor group_norm_sample(IntList sizes, DType dtype = DType::Float32, uint64_t seed = 0) {
  return make_sample(sizes, dtype, -3.0, 3.0, seed);
}

}  // namespace

KILN_OP(
    "native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt "
    "HxW, int group, float eps) -> (Tensor, Tensor, Tensor)")
    .meta(native_group_norm_meta)
    .cpu(native_group_norm_impl)
    .derivative(norm::native_group_norm_derivative, DerivativeReads::InputsAndOutputs, {1, 2})
    .decomposition(native_group_norm_decomposition)
    .tolerance(1e-5, 1e-5)
    .samples([] {
      return std::vector<Sample>{
          {{group_norm_sample({2, 6, 5}), group_norm_sample({6}, DType::Float32, 1),
            group_norm_sample({6}, DType::Float32, 2), 2, 6, 5, 3, 1e-5},
           "3 groups, affine"},
          {{group_norm_sample({2, 4, 3, 3}), IValue(), IValue(), 2, 4, 9, 2, 1e-3},
           "4-D, no affine"},
          {{group_norm_sample({3, 4}, DType::Float64), group_norm_sample({4}, DType::Float64, 1),
            IValue(), 3, 4, 1, 4, 1e-5},
           "float64, one channel per group"},
          {{group_norm_sample({0, 4, 2}), IValue(), IValue(), 0, 4, 2, 2, 1e-5}, "empty batch"},
      };
    });

KILN_OP(
    "group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float "
    "eps=1e-05, bool cudnn_enabled=True) -> Tensor")
    .composite([](const Stack& a) {
      static const OpDef& native = OpRegistry::instance().get("native_group_norm");
      const Tensor& input = a[0].to_tensor();
      const int64_t group = a[1].to_int();
      KILN_CHECK(input.dim() >= 2,
                 "group_norm: expected an input of at least 2 dimensions (N, C, *), but got "
                 "input of shape [{}]",
                 fmt::join(input.sizes(), ", "));
      const int64_t N = input.size(0), C = input.size(1);
      check_groups(input, C, group, a[2].to_optional_tensor(), a[3].to_optional_tensor(),
                   "group_norm");
      int64_t HxW = 1;
      for (int64_t d = 2; d < input.dim(); ++d) HxW *= input.size(d);
      return Outs{call(native, {a[0], a[2], a[3], N, C, HxW, group, a[4]})[0]};
    })
    .tolerance(1e-5, 1e-5)
    .samples([] {
      return std::vector<Sample>{
          {{group_norm_sample({2, 6, 5}), 3, group_norm_sample({6}, DType::Float32, 1),
            group_norm_sample({6}, DType::Float32, 2)},
           "3 groups, affine"},
          {{make_noncontiguous_sample({2, 4, 6}, DType::Float32), 2}, "non-contiguous"},
          {{group_norm_sample({2, 4, 3, 3}).contiguous(MemoryFormat::ChannelsLast), 4,
            group_norm_sample({4}, DType::Float32, 1), IValue(), 1e-3},
           "channels last, weight only"},
          {{group_norm_sample({2, 6, 4}, DType::BFloat16), 3,
            group_norm_sample({6}, DType::BFloat16, 1), group_norm_sample({6}, DType::BFloat16, 2)},
           "bfloat16"},
          {{group_norm_sample({3, 4}), 1}, "2-D, one group"},
      };
    });

}  // namespace kiln::ops
