// The CUDA slots of max_pool2d_with_indices, adaptive_max_pool2d and their backward ops. The
// arguments are checked and the windows sized by the CPU ops' own helpers (ops/pool/pool_common.h);
// the kernels are kernels/pooling.cu (cuDNN's pooling returns no indices). As on the CPU, a
// channels-last input is pooled in its layout, and the backward ops accumulate half types in
// float32 before rounding once.
#include "cuda/device_state.h"
#include "cuda/kernels/pooling.h"
#include "cuda/launch_args.h"
#include "cuda/register.h"
#include "ops/pool/pool_common.h"

#include <kiln/core/memory_format.h>
#include <kiln/cuda/cuda.h>
#include <kiln/ops/creation.h>

namespace kiln::cuda {
namespace {

using ops::Pool2dArgs;
using ops::Stack;
using ops::pool::PoolInput;
using Outs = std::vector<Tensor>;

kernels::MaxPool2d kernel_geometry(const Pool2dArgs& p, bool adaptive, bool channels_last) {
  kernels::MaxPool2d g;
  g.batch = p.batch;
  g.channels = p.channels;
  g.in_h = p.in_h;
  g.in_w = p.in_w;
  g.out_h = p.out_h;
  g.out_w = p.out_w;
  g.kernel_h = p.kernel_h;
  g.kernel_w = p.kernel_w;
  g.stride_h = p.stride_h;
  g.stride_w = p.stride_w;
  g.pad_h = p.pad_h;
  g.pad_w = p.pad_w;
  g.dilation_h = p.dilation_h;
  g.dilation_w = p.dilation_w;
  g.adaptive = adaptive;
  g.channels_last = channels_last;
  return g;
}

MemoryFormat layout_of(const PoolInput& in) {
  return in.channels_last ? MemoryFormat::ChannelsLast : MemoryFormat::Contiguous;
}

// `out` itself when it is dense in `fmt` with `dtype` (the outputs the meta functions describe
// are), else a temporary that finish() copies into it.
Tensor dense_output(const Tensor& out, MemoryFormat fmt, DType dtype) {
  if (out.dtype() == dtype && out.is_contiguous(fmt)) return out;
  return empty_strided(out.sizes(), strides_for_memory_format(out.sizes(), fmt),
                       TensorOptions(dtype).device(out.device()));
}

void finish(const Tensor& out, const Tensor& result) {
  if (!result.is_same(out)) device_copy(out, result);
}

void pool_forward(const char* op, const Tensor& self, const Pool2dArgs& p, bool adaptive,
                  const PoolInput& in, const Outs& out) {
  if (out[0].numel() == 0) return;
  const Device device = out[0].device();
  DeviceGuard guard(device.index());
  const MemoryFormat fmt = layout_of(in);
  const Tensor x = as_input(self, device, self.dtype(), op).contiguous(fmt);
  const Tensor values = dense_output(out[0], fmt, self.dtype());
  // _max_pool2d_values has no indices output: the kernel writes none.
  const Tensor indices = out.size() > 1 ? dense_output(out[1], fmt, DType::Int64) : Tensor();
  kernels::max_pool2d(scalar_type(self.dtype()), kernel_geometry(p, adaptive, in.channels_last),
                      x.data_ptr(), values.data_ptr(),
                      indices.defined() ? indices.data_ptr<int64_t>() : nullptr,
                      stream_of(device.index()));
  finish(out[0], values);
  if (indices.defined()) finish(out[1], indices);
}

// grad_input: every grad_output element added at its maximum's position.
void pool_backward(const char* op, const Tensor& grad_output, const Tensor& indices,
                   const Pool2dArgs& p, const PoolInput& in, const Tensor& out) {
  if (out.numel() == 0) return;
  const Device device = out.device();
  DeviceGuard guard(device.index());
  const MemoryFormat fmt = layout_of(in);
  const DType dtype = out.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  const Tensor go = as_input(grad_output, device, dtype, op).contiguous(fmt);
  const Tensor idx = as_input(indices, device, DType::Int64, op).contiguous(fmt);
  const Tensor result = dense_output(out, fmt, dtype);
  kernels::max_pool2d_backward(scalar_type(dtype), kernel_geometry(p, false, in.channels_last),
                               go.data_ptr(), idx.data_ptr<int64_t>(), result.data_ptr(),
                               stream_of(device.index()));
  finish(out, result);
}

// max_pool2d's window from the schema's lists starting at a[first] (kernel_size, stride,
// padding, dilation, ceil_mode), checked as the CPU op checks them.
Pool2dArgs window_args(const Stack& a, const PoolInput& in, size_t first, const char* op) {
  Pool2dArgs p;
  p.kind = ops::PoolKind::Max;
  ops::pool::window_geometry(p, in, a[first].to_int_list(), a[first + 1].to_int_list(),
                             a[first + 2].to_int_list(), a[first + 3].to_int_list(),
                             a[first + 4].to_bool(), op);
  return p;
}

Pool2dArgs adaptive_args(const PoolInput& in, IntList output_size, const char* op) {
  Pool2dArgs p;
  p.kind = ops::PoolKind::AdaptiveMax;
  ops::pool::adaptive_geometry(p, in, output_size, op);
  return p;
}

}  // namespace

KILN_CUDA_REGISTER(pooling_ops) {
  // The windowed forward, with its indices or (_max_pool2d_values) without.
  const auto windowed = [](const Stack& a, const Outs& out) {
    const char* op = "max_pool2d";
    const Tensor& self = a[0].to_tensor();
    const PoolInput in = ops::pool::pool_input(self, op);
    pool_forward(op, self, window_args(a, in, 1, op), /*adaptive=*/false, in, out);
  };
  structured("max_pool2d_with_indices", windowed);
  structured("_max_pool2d_values", windowed);
  structured("max_pool2d_with_indices_backward", [](const Stack& a, const Outs& out) {
    const char* op = "max_pool2d_with_indices_backward";
    const PoolInput in = ops::pool::pool_input(a[1].to_tensor(), op);
    pool_backward(op, a[0].to_tensor(), a[7].to_tensor(), window_args(a, in, 2, op), in, out[0]);
  });
  structured("adaptive_max_pool2d", [](const Stack& a, const Outs& out) {
    const char* op = "adaptive_max_pool2d";
    const Tensor& self = a[0].to_tensor();
    const PoolInput in = ops::pool::pool_input(self, op);
    pool_forward(op, self, adaptive_args(in, a[1].to_int_list(), op), /*adaptive=*/true, in, out);
  });
  structured("adaptive_max_pool2d_backward", [](const Stack& a, const Outs& out) {
    const char* op = "adaptive_max_pool2d_backward";
    const Tensor& go = a[0].to_tensor();
    const PoolInput in = ops::pool::pool_input(a[1].to_tensor(), op);
    const Pool2dArgs p = adaptive_args(in, IntList{go.size(-2), go.size(-1)}, op);
    pool_backward(op, go, a[2].to_tensor(), p, in, out[0]);
  });
}

}  // namespace kiln::cuda
