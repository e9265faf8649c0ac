// native_layer_norm (output, mean, rstd) and its composite layer_norm; rms_norm, which has its
// own kernel path because it sits on the hot path of LLMs. Both normalize over the trailing
// `normalized_shape` dims, one row at a time (norm.kernel.cpp).
#include "ops/norm/norm_backward_common.h"
#include "ops/norm/norm_kernels.h"
#include "ops/samples.h"
#include "ops/sizes_str.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/reduction.h>
#include <kiln/ops/sym_size_ops.h>
#include <kiln/ops/unary.h>

#include <limits>

namespace kiln::ops {
namespace {

using norm::Metas;
using norm::Outs;

// Checks normalized_shape, weight and bias against input; returns the number of rows' dims.
int64_t check_normalized_shape(const Tensor& input, IntList normalized_shape, const Tensor& weight,
                               const Tensor& bias, const char* op) {
  norm::check_floating(input, op);
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  KILN_CHECK(k >= 1,
             "{}: expected normalized_shape to be at least 1-dimensional, i.e., containing at "
             "least one element, but got normalized_shape = []",
             op);
  const int64_t axis = input.dim() - k;
  // SymInt comparisons: a symbolic input's trailing dims are checked with guards.
  bool trailing_match = axis >= 0;
  for (int64_t i = 0; trailing_match && i < k; ++i) {
    trailing_match = input.sym_size(axis + i) == normalized_shape[static_cast<size_t>(i)];
  }
  KILN_CHECK(trailing_match,
             "{}: given normalized_shape=[{}], expected input with shape [*, {}], but got input of "
             "size {}",
             op, fmt::join(normalized_shape, ", "), fmt::join(normalized_shape, ", "),
             sizes_str(input.sym_sizes()));
  for (const auto& [param, what] : {std::pair{weight, "weight"}, std::pair{bias, "bias"}}) {
    if (!param.defined()) continue;
    KILN_CHECK(IntList(param.sizes()) == normalized_shape,
               "{}: expected {} to be of same shape as normalized_shape, but got {} of shape [{}] "
               "and normalized_shape = [{}]",
               op, what, what, fmt::join(param.sizes(), ", "), fmt::join(normalized_shape, ", "));
  }
  return axis;
}

Metas native_layer_norm_meta(const Stack& a) {
  const Tensor& input = a[0].to_tensor();
  std::vector<int64_t> shape = a[1].to_int_list();
  const Tensor weight = a[2].to_optional_tensor(), bias = a[3].to_optional_tensor();
  const int64_t axis = check_normalized_shape(input, shape, weight, bias, "native_layer_norm");
  SymDimVector stats_sizes(input.sym_sizes().begin(), input.sym_sizes().end());
  for (size_t d = static_cast<size_t>(axis); d < stats_sizes.size(); ++d) stats_sizes[d] = 1;
  const DType sd = norm::stats_dtype(input, norm::is_mixed(input, {weight, bias}));
  return {TensorMeta::contiguous(input.sym_sizes().vec(), input.dtype(), input.device()),
          TensorMeta::contiguous(stats_sizes, sd, input.device()),
          TensorMeta::contiguous(stats_sizes, sd, input.device())};
}

// Runs the row kernel: rows are the leading dims, columns the normalized ones.
void run_row_norm(const Tensor& input, int64_t axis, const Tensor& weight, const Tensor& bias,
                  double eps, bool rms, const Tensor& out, const Tensor& mean, const Tensor& rstd) {
  if (out.numel() == 0) {
    if (mean.defined() && mean.numel() > 0) {  // rows of zero columns: mean 0, rstd NaN
      Tensor(mean).fill_(0);
      Tensor(rstd).fill_(std::numeric_limits<double>::quiet_NaN());
    }
    return;
  }
  const bool mixed = norm::is_mixed(input, {weight, bias});
  const DType param_dtype = mixed ? DType::Float32 : input.dtype();
  const Tensor x = input.contiguous();
  const Tensor w = norm::contiguous_as(weight, param_dtype);
  const Tensor b = norm::contiguous_as(bias, param_dtype);
  RowNormArgs args;
  args.input = x.data_ptr();
  args.out = out.data_ptr();
  args.weight = w.defined() ? w.data_ptr() : nullptr;
  args.bias = b.defined() ? b.data_ptr() : nullptr;
  args.mean = mean.defined() ? mean.data_ptr() : nullptr;
  args.rstd = rstd.defined() ? rstd.data_ptr() : nullptr;
  int64_t rows = 1;
  for (int64_t d = 0; d < axis; ++d) rows *= input.size(d);
  args.rows = rows;
  args.cols = rows == 0 ? 0 : input.numel() / rows;
  args.eps = eps;
  args.dtype = input.dtype();
  args.mixed = mixed;
  args.rms = rms;
  row_norm_kernels(args);
}

void native_layer_norm_impl(const Stack& a, const Outs& out) {
  const Tensor& input = a[0].to_tensor();
  const int64_t axis = input.dim() - static_cast<int64_t>(a[1].to_int_list().size());
  run_row_norm(input, axis, a[2].to_optional_tensor(), a[3].to_optional_tensor(), a[4].to_double(),
               /*rms=*/false, out[0], out[1], out[2]);
}

// The normalized dims (axis..) of input.
std::vector<int64_t> trailing_dims(const Tensor& input, int64_t axis) {
  std::vector<int64_t> dims;
  for (int64_t d = axis; d < input.dim(); ++d) dims.push_back(d);
  return dims;
}

// native_layer_norm in kiln ops, as the row kernel computes it: statistics and normalization in
// the opmath dtype (float32 for 16-bit floats), biased variance, rstd = 1 / sqrt(var + eps).
std::vector<Tensor> native_layer_norm_decomposition(const Stack& a) {
  const Tensor& input = a[0].to_tensor();
  const std::vector<int64_t> shape = a[1].to_int_list();
  const Tensor weight = a[2].to_optional_tensor(), bias = a[3].to_optional_tensor();
  const int64_t axis = check_normalized_shape(input, shape, weight, bias, "native_layer_norm");
  const DType sd = norm::stats_dtype(input, norm::is_mixed(input, {weight, bias}));
  const DType acc = norm::opmath_dtype(input.dtype());
  const std::vector<int64_t> dims = trailing_dims(input, axis);
  SymDimVector stats_sizes(input.sym_sizes().begin(), input.sym_sizes().end());
  SymInt cols = 1;
  for (int64_t d : dims) {
    cols = cols * input.sym_size(d);
    stats_sizes[static_cast<size_t>(d)] = 1;
  }
  if (cols == 0) {  // rows of zero columns: mean 0, rstd NaN (the kernel's convention)
    return {full_symint(input.sym_sizes(), 0, input.dtype()), full_symint(stats_sizes, 0, sd),
            full_symint(stats_sizes, std::numeric_limits<double>::quiet_NaN(), sd)};
  }
  const Tensor x = input.to(acc);
  auto [var, mean] = var_mean(x, dims, Scalar(0), /*keepdim=*/true);
  const Tensor rstd = rsqrt(var + a[4].to_double());
  Tensor y = (x - mean) * rstd;
  if (weight.defined()) y = y * weight.to(acc);
  if (bias.defined()) y = y + bias.to(acc);
  return {y.to(input.dtype()), mean.to(sd), rstd.to(sd)};
}

Tensor layer_norm_sample(IntList sizes, DType dtype = DType::Float32, uint64_t seed = 0) {
  return make_sample(sizes, dtype, -3.0, 3.0, seed);
}

std::vector<Sample> layer_norm_samples(bool native) {
  auto with_eps = [native](Stack args, double eps = 1e-5) {
    if (native) args.emplace_back(eps);
    return args;
  };
  Tensor shifted = add(layer_norm_sample({4, 37}, DType::Float32, 7), 100.0);
  std::vector<Sample> out{
      {with_eps({layer_norm_sample({2, 3, 5}), IntList{5},
                 layer_norm_sample({5}, DType::Float32, 1),
                 layer_norm_sample({5}, DType::Float32, 2)}),
       "last dim, weight and bias"},
      {with_eps({layer_norm_sample({2, 3, 5}), IntList{3, 5},
                 layer_norm_sample({3, 5}, DType::Float32, 1), IValue()}),
       "two dims, weight only"},
      {with_eps({layer_norm_sample({3, 70}), IntList{70}, IValue(),
                 layer_norm_sample({70}, DType::Float32, 3)},
                1e-3),
       "bias only, SIMD tail, eps"},
      {with_eps(
           {make_noncontiguous_sample({4, 6}, DType::Float32), IntList{6}, IValue(), IValue()}),
       "non-contiguous, no affine"},
      {with_eps({shifted, IntList{37}, IValue(), IValue()}), "rows with a large mean"},
      {with_eps({layer_norm_sample({2, 4}, DType::Float64), IntList{4},
                 layer_norm_sample({4}, DType::Float64, 1),
                 layer_norm_sample({4}, DType::Float64, 2)}),
       "float64"},
      {with_eps({layer_norm_sample({3, 8}, DType::BFloat16), IntList{8},
                 layer_norm_sample({8}, DType::BFloat16, 1),
                 layer_norm_sample({8}, DType::BFloat16, 2)}),
       "bfloat16"},
      {with_eps({layer_norm_sample({0, 4}), IntList{4}, layer_norm_sample({4}, DType::Float32, 1),
                 IValue()}),
       "empty batch"},
      {with_eps({layer_norm_sample({7}), IntList{7}, IValue(), IValue()}), "1-D"},
  };
  if (!native) {
    out.push_back({{layer_norm_sample({2, 6}), IntList{6}}, "defaults"});
  }
  return out;
}

// rms_norm's eps when None: the epsilon of the dtype the op computes in (PyTorch's rule).
double rms_default_eps(DType dtype) {
  return dtype == DType::Float64 ? std::numeric_limits<double>::epsilon()
                                 : static_cast<double>(std::numeric_limits<float>::epsilon());
}

// rms_norm in kiln ops: x * rsqrt(mean(x^2) + eps) [* weight], in the opmath dtype.
std::vector<Tensor> rms_norm_decomposition(const Stack& a) {
  const Tensor& input = a[0].to_tensor();
  const std::vector<int64_t> shape = a[1].to_int_list();
  const Tensor weight = a[2].to_optional_tensor();
  const int64_t axis = check_normalized_shape(input, shape, weight, Tensor(), "rms_norm");
  const double eps = a[3].to_optional_double().value_or(rms_default_eps(input.dtype()));
  const DType acc = norm::opmath_dtype(input.dtype());
  int64_t cols = 1;
  for (int64_t n : shape) cols *= n;
  const Tensor x = input.to(acc);
  const Tensor mean_square =
      sum(x * x, trailing_dims(input, axis), /*keepdim=*/true) / static_cast<double>(cols);
  Tensor y = x * rsqrt(mean_square + eps);
  if (weight.defined()) y = y * weight.to(acc);
  return {y.to(input.dtype())};
}

}  // namespace

KILN_OP(
    "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, "
    "float eps) -> (Tensor, Tensor, Tensor)")
    .meta(native_layer_norm_meta)
    .cpu(native_layer_norm_impl)
    .derivative(norm::native_layer_norm_derivative, DerivativeReads::InputsAndOutputs, {1, 2})
    .decomposition(native_layer_norm_decomposition)
    .tolerance(1e-5, 1e-5)
    .samples([] { return layer_norm_samples(true); });

KILN_OP(
    "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
    "float eps=1e-05, bool cudnn_enable=True) -> Tensor")
    .composite([](const Stack& a) {
      static const OpDef& native = OpRegistry::instance().get("native_layer_norm");
      return Outs{call(native, {a[0], a[1], a[2], a[3], a[4]})[0]};
    })
    .tolerance(1e-5, 1e-5)
    .samples([] { return layer_norm_samples(false); });

KILN_OP(
    "rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> "
    "Tensor")
    .meta([](const Stack& a) {
      const Tensor& input = a[0].to_tensor();
      check_normalized_shape(input, a[1].to_int_list(), a[2].to_optional_tensor(), Tensor(),
                             "rms_norm");
      return Metas{TensorMeta::contiguous(norm::sym(input.sizes()), input.dtype(), input.device())};
    })
    .cpu([](const Stack& a, const Outs& out) {
      const Tensor& input = a[0].to_tensor();
      const int64_t axis = input.dim() - static_cast<int64_t>(a[1].to_int_list().size());
      const double eps = a[3].to_optional_double().value_or(rms_default_eps(input.dtype()));
      run_row_norm(input, axis, a[2].to_optional_tensor(), Tensor(), eps, /*rms=*/true, out[0],
                   Tensor(), Tensor());
    })
    .derivative(norm::rms_norm_derivative)
    .decomposition(rms_norm_decomposition)
    .tolerance(1e-5, 1e-5)
    .samples([] {
      return std::vector<Sample>{
          {{layer_norm_sample({2, 3, 5}), IntList{5}, layer_norm_sample({5}, DType::Float32, 1),
            1e-6},
           "weight, eps"},
          {{layer_norm_sample({2, 3, 5}), IntList{3, 5}}, "two dims, defaults"},
          {{layer_norm_sample({3, 70}), IntList{70}, layer_norm_sample({70}, DType::Float32, 1)},
           "SIMD tail, default eps"},
          {{make_noncontiguous_sample({4, 6}, DType::Float32), IntList{6}}, "non-contiguous"},
          {{layer_norm_sample({2, 4}, DType::Float64), IntList{4},
            layer_norm_sample({4}, DType::Float64, 1)},
           "float64"},
          {{layer_norm_sample({3, 8}, DType::BFloat16), IntList{8},
            layer_norm_sample({8}, DType::BFloat16, 1)},
           "bfloat16"},
          {{layer_norm_sample({0, 4}), IntList{4}}, "empty batch"},
          {{full({2, 4}, 1e-4), IntList{4}}, "tiny values: eps matters"},
      };
    });

}  // namespace kiln::ops
