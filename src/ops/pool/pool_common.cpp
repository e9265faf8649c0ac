#include "ops/pool/pool_common.h"
#include "ops/sizes_str.h"

#include "ops/view/view_utils.h"

#include <kiln/core/memory_format.h>
#include <kiln/ops/creation.h>

namespace kiln::ops {

cpu::KernelDispatch<Pool2dKernel> pool2d_kernels;
cpu::KernelDispatch<Pool2dKernel> pool2d_backward_kernels;

namespace pool {
namespace {

// One or two values (one means both dims), as PyTorch accepts for pooling's int[2] lists.
std::pair<int64_t, int64_t> pair_of(IntList v, const char* op, const char* what) {
  KILN_CHECK(v.size() == 1 || v.size() == 2,
             "{}: {} must either be a single int, or a tuple of two ints, but got [{}]", op, what,
             fmt::join(v, ", "));
  return {v[0], v.size() == 2 ? v[1] : v[0]};
}

// Floor division (the numerator may be negative).
int64_t div_floor(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// PyTorch's pooling_output_shape: with ceil_mode the last window must start inside the input or
// its left padding.
int64_t output_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation,
                    bool ceil_mode) {
  int64_t out =
      div_floor(in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0), stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// output_size on a symbolic input size: SymInt's floor division is Python's, as div_floor; the
// ceil_mode comparison records a guard.
SymInt sym_output_size(const SymInt& in, int64_t k, int64_t pad, int64_t stride, int64_t dilation,
                       bool ceil_mode) {
  SymInt out =
      (in + (2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0))) / stride + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) out = out - 1;
  return out;
}

std::string dims_str(const PoolInput& in, int64_t h, int64_t w) {
  return fmt::format("{}x{}x{}", in.channels, h, w);
}

// The window's checks (PyTorch's), filling a's kernel, stride, padding and dilation.
void window_params(Pool2dArgs& a, IntList kernel_size, IntList stride, IntList padding,
                   IntList dilation, const char* op) {
  std::tie(a.kernel_h, a.kernel_w) = pair_of(kernel_size, op, "kernel_size");
  if (stride.empty()) {
    a.stride_h = a.kernel_h;
    a.stride_w = a.kernel_w;
  } else {
    std::tie(a.stride_h, a.stride_w) = pair_of(stride, op, "stride");
  }
  std::tie(a.pad_h, a.pad_w) = pair_of(padding, op, "padding");
  std::tie(a.dilation_h, a.dilation_w) = pair_of(dilation, op, "dilation");
  KILN_CHECK(a.kernel_h > 0 && a.kernel_w > 0,
             "{}: kernel size should be greater than zero, but got kH: {} kW: {}", op, a.kernel_h,
             a.kernel_w);
  KILN_CHECK(a.stride_h > 0 && a.stride_w > 0,
             "{}: stride should be greater than zero, but got dH: {} dW: {}", op, a.stride_h,
             a.stride_w);
  KILN_CHECK(a.dilation_h > 0 && a.dilation_w > 0,
             "{}: dilation should be greater than zero, but got dilationH: {} dilationW: {}", op,
             a.dilation_h, a.dilation_w);
  KILN_CHECK(a.pad_h >= 0 && a.pad_w >= 0, "{}: padding must be non-negative, but got [{}, {}]", op,
             a.pad_h, a.pad_w);
  KILN_CHECK(a.kernel_h / 2 >= a.pad_h && a.kernel_w / 2 >= a.pad_w,
             "{}: pad should be at most half of effective kernel size, but got pad=[{}, {}], "
             "kernel_size=[{}, {}] and dilation=[{}, {}]",
             op, a.pad_h, a.pad_w, a.kernel_h, a.kernel_w, a.dilation_h, a.dilation_w);
}

}  // namespace

SymPoolInput sym_pool_input(const Tensor& input, const char* op) {
  const int64_t d = input.dim();
  bool ok = d == 3 || d == 4;
  for (int64_t i = d - 3; ok && i < d; ++i) ok = input.sym_size(i) > 0;
  KILN_CHECK(ok,
             "{}: expected a 3D (C, H, W) or 4D (N, C, H, W) input with non-zero C, H and W (the "
             "batch may be 0), but got input of shape {}",
             op, sizes_str(input.sym_sizes()));
  SymPoolInput in;
  in.batched = d == 4;
  in.batch = d == 4 ? input.sym_size(0) : SymInt(1);
  in.channels = input.sym_size(-3);
  in.height = input.sym_size(-2);
  in.width = input.sym_size(-1);
  in.channels_last = d == 4 && input.suggest_memory_format() == MemoryFormat::ChannelsLast;
  return in;
}

std::pair<SymInt, SymInt> sym_window_output(const SymPoolInput& in, IntList kernel_size,
                                            IntList stride, IntList padding, IntList dilation,
                                            bool ceil_mode, const char* op) {
  Pool2dArgs a;
  window_params(a, kernel_size, stride, padding, dilation, op);
  SymInt out_h =
      sym_output_size(in.height, a.kernel_h, a.pad_h, a.stride_h, a.dilation_h, ceil_mode);
  SymInt out_w =
      sym_output_size(in.width, a.kernel_w, a.pad_w, a.stride_w, a.dilation_w, ceil_mode);
  KILN_CHECK(out_h >= 1 && out_w >= 1,
             "{}: given input size: ({}x{}x{}). Calculated output size: ({}x{}x{}). Output size is "
             "too small",
             op, in.channels.str(), in.height.str(), in.width.str(), in.channels.str(), out_h.str(),
             out_w.str());
  return {std::move(out_h), std::move(out_w)};
}

TensorMeta sym_output_meta(const Tensor& input, const SymPoolInput& in, const SymInt& out_h,
                           const SymInt& out_w, DType dtype) {
  TensorMeta m;
  if (in.batched) m.sizes.push_back(in.batch);
  for (const SymInt& s : {in.channels, out_h, out_w}) m.sizes.push_back(s);
  m.strides =
      strides_for_memory_format(SymIntList(m.sizes), in.channels_last ? MemoryFormat::ChannelsLast
                                                                      : MemoryFormat::Contiguous);
  m.dtype = dtype;
  m.device = input.device();
  return m;
}

PoolInput pool_input(const Tensor& input, const char* op) {
  // The symbolic reader's checks and dims, concrete here.
  const SymPoolInput s = sym_pool_input(input, op);
  return {.batched = s.batched,
          .batch = s.batch.expect_int(),
          .channels = s.channels.expect_int(),
          .height = s.height.expect_int(),
          .width = s.width.expect_int(),
          .channels_last = s.channels_last};
}

void window_geometry(Pool2dArgs& a, const PoolInput& in, IntList kernel_size, IntList stride,
                     IntList padding, IntList dilation, bool ceil_mode, const char* op) {
  window_params(a, kernel_size, stride, padding, dilation, op);
  a.batch = in.batch;
  a.channels = in.channels;
  a.in_h = in.height;
  a.in_w = in.width;
  a.out_h = output_size(in.height, a.kernel_h, a.pad_h, a.stride_h, a.dilation_h, ceil_mode);
  a.out_w = output_size(in.width, a.kernel_w, a.pad_w, a.stride_w, a.dilation_w, ceil_mode);
  KILN_CHECK(a.out_h >= 1 && a.out_w >= 1,
             "{}: given input size: ({}). Calculated output size: ({}). Output size is too small",
             op, dims_str(in, in.height, in.width), dims_str(in, a.out_h, a.out_w));
}

void adaptive_geometry(Pool2dArgs& a, const PoolInput& in, IntList output_size, const char* op) {
  KILN_CHECK(output_size.size() == 2 || output_size.size() == 1,
             "{}: output_size must have 1 or 2 elements, but got [{}]", op,
             fmt::join(output_size, ", "));
  a.out_h = output_size[0];
  a.out_w = output_size.size() == 2 ? output_size[1] : output_size[0];
  KILN_CHECK(a.out_h >= 0 && a.out_w >= 0,
             "{}: elements of output_size must be greater than or equal to 0, but got [{}]", op,
             fmt::join(output_size, ", "));
  a.batch = in.batch;
  a.channels = in.channels;
  a.in_h = in.height;
  a.in_w = in.width;
}

TensorMeta output_meta(const Tensor& input, const PoolInput& in, const Pool2dArgs& a, DType dtype) {
  DimVector sizes;
  if (in.batched) sizes.push_back(in.batch);
  for (int64_t s : {in.channels, a.out_h, a.out_w}) sizes.push_back(s);
  const DimVector strides = strides_for_memory_format(
      sizes, in.channels_last ? MemoryFormat::ChannelsLast : MemoryFormat::Contiguous);
  TensorMeta m;
  for (int64_t s : sizes) m.sizes.push_back(s);
  for (int64_t s : strides) m.strides.push_back(s);
  m.dtype = dtype;
  m.device = input.device();
  return m;
}

void run(Pool2dArgs a, const Tensor& input, const Tensor& out, const Tensor& indices) {
  if (out.numel() == 0) return;
  const PoolInput in = pool_input(input, "pool2d");
  const Tensor x =
      in.channels_last ? input.contiguous(MemoryFormat::ChannelsLast) : input.contiguous();
  a.input = x.data_ptr();
  a.out = out.data_ptr();
  a.indices = indices.defined() ? static_cast<int64_t*>(indices.data_ptr()) : nullptr;
  a.dtype = input.dtype();
  a.channels_last = in.channels_last;
  pool2d_kernels(a);
}

void check_dtype(const Tensor& input, bool integers_ok, const char* op) {
  const DType d = input.dtype();
  const bool ok = is_floating_point(d) || (integers_ok && is_integral(d, /*include_bool=*/false));
  KILN_CHECK_T(TypeError, ok, "{}: unsupported dtype {} (expected {})", op, dtype_name(d),
               integers_ok ? "a floating point or integer dtype" : "a floating point dtype");
}

TensorMeta grad_input_meta(const Tensor& grad_output, const Tensor& input, const Tensor& indices,
                           const SymPoolInput& in, const SymInt& out_h, const SymInt& out_w,
                           const char* op) {
  check_dtype(input, /*integers_ok=*/false, op);
  KILN_CHECK_T(TypeError, grad_output.dtype() == input.dtype(),
               "{}: expected grad_output of dtype {}, got {}", op, dtype_name(input.dtype()),
               dtype_name(grad_output.dtype()));
  SymDimVector expected;
  if (in.batched) expected.push_back(in.batch);
  for (const SymInt& s : {in.channels, out_h, out_w}) expected.push_back(s);
  KILN_CHECK(grad_output.sym_sizes() == SymIntList(expected),
             "{}: expected grad_output of shape {}, got {}", op,
             view_detail::shape_str(SymIntList(expected)),
             view_detail::shape_str(grad_output.sym_sizes()));
  if (indices.defined()) {
    KILN_CHECK(indices.sym_sizes() == SymIntList(expected) && indices.dtype() == DType::Int64,
               "{}: expected int64 indices of shape {}, got {} of shape {}", op,
               view_detail::shape_str(SymIntList(expected)), dtype_name(indices.dtype()),
               view_detail::shape_str(indices.sym_sizes()));
  }
  TensorMeta m;
  m.sizes = input.sym_sizes().vec();
  m.strides = strides_for_memory_format(
      input.sym_sizes(), in.channels_last ? MemoryFormat::ChannelsLast : MemoryFormat::Contiguous);
  m.dtype = input.dtype();
  m.device = input.device();
  return m;
}

TensorMeta grad_input_meta(const Tensor& grad_output, const Tensor& input, const Tensor& indices,
                           const PoolInput& in, const Pool2dArgs& a, const char* op) {
  const SymPoolInput sym{.batched = in.batched,
                         .batch = in.batch,
                         .channels = in.channels,
                         .height = in.height,
                         .width = in.width,
                         .channels_last = in.channels_last};
  return grad_input_meta(grad_output, input, indices, sym, a.out_h, a.out_w, op);
}

void run_backward(Pool2dArgs a, const Tensor& grad_output, const Tensor& input,
                  const Tensor& indices, const Tensor& out) {
  if (out.numel() == 0) return;
  const PoolInput in = pool_input(input, "pool2d_backward");
  const MemoryFormat fmt = in.channels_last ? MemoryFormat::ChannelsLast : MemoryFormat::Contiguous;
  const DType dtype = out.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  const Tensor go = grad_output.to(dtype).contiguous(fmt);
  const Tensor idx = indices.defined() ? indices.contiguous(fmt) : indices;
  Tensor result = out.dtype() == dtype && out.is_contiguous(fmt)
                      ? out
                      : empty_strided(out.sizes(), strides_for_memory_format(out.sizes(), fmt),
                                      TensorOptions(dtype));
  a.input = go.data_ptr();
  a.out = result.data_ptr();
  a.indices = idx.defined() ? static_cast<int64_t*>(idx.data_ptr()) : nullptr;
  a.dtype = dtype;
  a.channels_last = in.channels_last;
  pool2d_backward_kernels(a);
  if (!result.is_same(out)) {
    Tensor dst = out;
    dst.copy_(result);
  }
}

Stack normalized(const OpDef& op, Stack args) {
  normalize_args(op.schema, args);
  return args;
}

Tensor gather_at_indices(const Tensor& grad, const Tensor& indices) {
  return grad.flatten(-2).gather(-1, indices.flatten(-2)).view(indices.sizes());
}

}  // namespace pool
}  // namespace kiln::ops
