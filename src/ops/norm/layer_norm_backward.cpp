// native_layer_norm_backward (aten's schema): grad_input, grad_weight, grad_bias from the
// forward's saved mean and rstd, in one fused pass per row (norm_backward.kernel.cpp). Its
// decomposition, in kiln ops, gives double backward and is the kernel's reference.
#include "ops/norm/norm_backward_common.h"
#include "ops/norm/norm_backward_kernels.h"
#include "ops/samples.h"
#include "ops/view/view_utils.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/norm.h>

namespace kiln::ops {
namespace {

using norm::MaybeMetas;
using norm::Outs;

constexpr const char* kLayerNormBackward = "native_layer_norm_backward";

struct LayerNormBackwardArgs {
  Tensor grad_out, input;
  std::vector<int64_t> shape;
  Tensor mean, rstd, weight, bias;
  std::array<bool, 3> mask;
};

LayerNormBackwardArgs unpack_layer_norm_backward(const Stack& a) {
  return {a[0].to_tensor(),          a[1].to_tensor(),       a[2].to_int_list(),
          a[3].to_tensor(),          a[4].to_tensor(),       a[5].to_optional_tensor(),
          a[6].to_optional_tensor(), norm::output_mask(a[7])};
}

using view_detail::shape_str;

MaybeMetas metas(const LayerNormBackwardArgs& b) {
  norm::check_floating(b.input, kLayerNormBackward);
  const SymIntList sizes = b.input.sym_sizes();
  KILN_CHECK(b.grad_out.sym_sizes() == sizes,
             "{}: expected grad_out of the input's shape {}, but got {}", kLayerNormBackward,
             shape_str(sizes), shape_str(b.grad_out.sym_sizes()));
  const int64_t k = static_cast<int64_t>(b.shape.size());
  bool trailing = k >= 1 && k <= b.input.dim();
  SymInt cols = 1;
  for (int64_t i = 0; trailing && i < k; ++i) {
    const SymInt& d = sizes[static_cast<size_t>(b.input.dim() - k + i)];
    trailing = d == b.shape[static_cast<size_t>(i)];
    cols = cols * d;
  }
  KILN_CHECK(trailing, "{}: normalized_shape [{}] does not match the trailing dims of input {}",
             kLayerNormBackward, fmt::join(b.shape, ", "), shape_str(sizes));
  const SymInt rows = cols == 0 ? SymInt(0) : b.input.sym_numel() / cols;
  KILN_CHECK(b.mean.sym_numel() == rows && b.rstd.sym_numel() == rows,
             "{}: expected mean and rstd of {} elements (one per row), but got {} and {}",
             kLayerNormBackward, rows.str(), b.mean.sym_numel().str(), b.rstd.sym_numel().str());
  const Device dev = b.input.device();
  MaybeMetas m;
  if (b.mask[0]) m[0] = TensorMeta::contiguous(sizes.vec(), b.input.dtype(), dev);
  if (b.mask[1] && b.weight.defined()) {
    m[1] = TensorMeta::contiguous(b.weight.sym_sizes().vec(), b.weight.dtype(), dev);
  }
  if (b.mask[2] && b.bias.defined()) {
    m[2] = TensorMeta::contiguous(b.bias.sym_sizes().vec(), b.bias.dtype(), dev);
  }
  return m;
}

Outs layer_norm_backward_cpu(const Stack& a) {
  const LayerNormBackwardArgs b = unpack_layer_norm_backward(a);
  Outs out = norm::allocate(metas(b));
  int64_t cols = 1;
  for (int64_t s : b.shape) cols *= s;
  const int64_t rows = cols == 0 ? 0 : b.input.numel() / cols;
  if (rows == 0 || cols == 0) {
    for (size_t i = 1; i < 3; ++i) {
      if (out[i].defined()) out[i].fill_(0);
    }
    return out;
  }
  const bool mixed = norm::is_mixed(b.input, {b.weight, b.bias});
  const DType pd = mixed ? DType::Float32 : b.input.dtype();
  const Tensor dy = norm::contiguous_as(b.grad_out, b.input.dtype());
  const Tensor x = b.input.contiguous();
  const Tensor mean = norm::contiguous_as(b.mean, pd), rstd = norm::contiguous_as(b.rstd, pd);
  const Tensor w = norm::contiguous_as(b.weight, pd);
  // grad_weight/grad_bias are summed in the parameter dtype, then cast to the parameter's own.
  auto param_out = [&](const Tensor& o) {
    return !o.defined() || o.dtype() == pd ? o : empty({o.numel()}, TensorOptions(pd));
  };
  const Tensor dw = param_out(out[1]), db = param_out(out[2]);
  RowNormBackwardArgs k;
  k.grad_out = dy.data_ptr();
  k.input = x.data_ptr();
  k.mean = mean.data_ptr();
  k.rstd = rstd.data_ptr();
  k.weight = w.defined() ? w.data_ptr() : nullptr;
  k.grad_input = out[0].defined() ? out[0].data_ptr() : nullptr;
  k.grad_weight = dw.defined() ? dw.data_ptr() : nullptr;
  k.grad_bias = db.defined() ? db.data_ptr() : nullptr;
  k.rows = rows;
  k.cols = cols;
  k.dtype = b.input.dtype();
  k.mixed = mixed;
  row_norm_backward_kernels(k);
  if (dw.defined() && !dw.is_same(out[1])) out[1].copy_(dw.view(out[1].sizes()));
  if (db.defined() && !db.is_same(out[2])) out[2].copy_(db.view(out[2].sizes()));
  return out;
}

// The same in kiln ops: xhat = (x - mean) * rstd, g = grad_out * weight,
// grad_input = rstd * (g - mean(g) - xhat * mean(g * xhat)) over the normalized dims, element-wise
// in the opmath dtype (float32 for float32, as PyTorch's CPU kernel) with the sums accumulated in
// float64 by whoever runs them (float64 element-wise math made every compiled pass twice as wide).
std::vector<Tensor> layer_norm_backward_decomposition(const Stack& a) {
  const LayerNormBackwardArgs b = unpack_layer_norm_backward(a);
  const MaybeMetas m = metas(b);
  const int64_t axis = b.input.dim() - static_cast<int64_t>(b.shape.size());
  std::vector<int64_t> inner, outer;
  for (int64_t d = 0; d < b.input.dim(); ++d) (d < axis ? outer : inner).push_back(d);
  double cols = 1;
  for (int64_t n : b.shape) cols *= static_cast<double>(n);
  const DType acc = norm::opmath_dtype(b.input.dtype());
  const Tensor dy = b.grad_out.to(acc);
  const Tensor xhat = (b.input.to(acc) - b.mean.to(acc)) * b.rstd.to(acc);
  Outs out(3);
  if (m[0]) {
    const Tensor g = b.weight.defined() ? dy * b.weight.to(acc) : dy;
    const Tensor row_mean_g = g.sum(inner, true) / cols;
    const Tensor row_mean_gx = (g * xhat).sum(inner, true) / cols;
    out[0] = (b.rstd.to(acc) * (g - row_mean_g - xhat * row_mean_gx)).to(b.input.dtype());
  }
  if (m[1]) out[1] = (dy * xhat).sum(outer).to(b.weight.dtype());
  if (m[2]) out[2] = dy.sum(outer).to(b.bias.dtype());
  return out;
}

Tensor layer_norm_backward_sample(IntList sizes, DType dtype = DType::Float32, uint64_t seed = 0) {
  return make_sample(sizes, dtype, -2.0, 2.0, seed);
}

// grad_out, input and the forward's statistics for input.
Stack layer_norm_backward_args(const Tensor& input, IntList shape, const Tensor& weight,
                               const Tensor& bias, IntList mask) {
  auto [y, mean, rstd] = native_layer_norm(input, shape, weight, bias, 1e-5);
  return {layer_norm_backward_sample(input.sizes(), input.dtype(), 11),
          input,
          shape,
          mean,
          rstd,
          norm::optional_arg(weight),
          norm::optional_arg(bias),
          mask};
}

std::vector<Sample> layer_norm_backward_samples() {
  const DType f = DType::Float32;
  return {
      {layer_norm_backward_args(layer_norm_backward_sample({4, 37}), IntList{37},
                                layer_norm_backward_sample({37}, f, 1),
                                layer_norm_backward_sample({37}, f, 2), IntList{1, 1, 1}),
       "weight and bias, SIMD tail"},
      {layer_norm_backward_args(layer_norm_backward_sample({2, 3, 5}), IntList{3, 5},
                                layer_norm_backward_sample({3, 5}, f, 1), Tensor(),
                                IntList{1, 1, 0}),
       "two dims, weight only"},
      {layer_norm_backward_args(layer_norm_backward_sample({3, 8}), IntList{8}, Tensor(), Tensor(),
                                IntList{1, 0, 0}),
       "no affine"},
      {layer_norm_backward_args(layer_norm_backward_sample({3, 8}), IntList{8},
                                layer_norm_backward_sample({8}, f, 1),
                                layer_norm_backward_sample({8}, f, 2), IntList{0, 1, 1}),
       "parameters only"},
      {layer_norm_backward_args(layer_norm_backward_sample({2, 3, 4}, DType::Float64), IntList{4},
                                layer_norm_backward_sample({4}, DType::Float64, 1),
                                layer_norm_backward_sample({4}, DType::Float64, 2),
                                IntList{1, 1, 1}),
       "float64"},
      {layer_norm_backward_args(layer_norm_backward_sample({3, 8}, DType::BFloat16), IntList{8},
                                layer_norm_backward_sample({8}, DType::BFloat16, 1),
                                layer_norm_backward_sample({8}, DType::BFloat16, 2),
                                IntList{1, 1, 1}),
       "bfloat16"},
      {layer_norm_backward_args(layer_norm_backward_sample({0, 4}), IntList{4},
                                layer_norm_backward_sample({4}, f, 1),
                                layer_norm_backward_sample({4}, f, 2), IntList{1, 1, 1}),
       "empty batch"},
  };
}

}  // namespace

KILN_OP(
    "native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor "
    "mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, "
    "Tensor)")
    .custom(DeviceType::CPU, layer_norm_backward_cpu)
    .custom(DeviceType::Meta,
            [](const Stack& a) { return norm::meta_outputs(metas(unpack_layer_norm_backward(a))); })
    .decomposition(layer_norm_backward_decomposition)
    .tolerance(1e-4, 1e-5)
    .samples(layer_norm_backward_samples);

}  // namespace kiln::ops
