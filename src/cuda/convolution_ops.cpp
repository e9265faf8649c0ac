// The CUDA slots of convolution and convolution_backward (1-d to 3-d, transposed, groups) through
// cuDNN's convolution API (cudnn_conv_pass.h): float32 (TF32 as kiln::cuda::set_cudnn_allow_tf32
// says: on by default as in PyTorch; off, FMA kernels match the CPU's to float32 rounding),
// float64, and float16/bfloat16 accumulating in float32.
//
// Every pass is one of the three cuDNN runs of a forward convolution y = conv(x, w). A
// transposed convolution is the BackwardData of the convolution that maps its output to its
// input, so its passes are the plain ones with x and y exchanged.
//
// Integer dtypes (cuDNN has no exact integer convolution) and problems cuDNN reports as not
// supported go through convolution_by_taps, written in kiln ops: one broadcast multiply and sum
// per kernel tap, accumulating in int64 (float32 for the half types), as exact as the CPU's loops.
#include "cuda/cudnn_conv_pass.h"
#include "cuda/cudnn_handle.h"
#include "cuda/device_state.h"
#include "cuda/launch_args.h"
#include "cuda/register.h"
#include "ops/conv/conv_backward.h"
#include "ops/conv/conv_params.h"

#include <kiln/core/error.h>
#include <kiln/cuda/cuda.h>
#include <kiln/ops/creation.h>

#include <array>
#include <climits>
#include <exception>
#include <vector>

namespace kiln::cuda {
namespace {

using ops::Stack;
using ops::conv::ConvParams;

bool cudnn_takes(DType dtype) {
  return dtype == DType::Float16 || dtype == DType::BFloat16 || dtype == DType::Float32 ||
         dtype == DType::Float64;
}

TensorOptions options_of(DType dtype, Device device) { return TensorOptions(dtype).device(device); }

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

// One cuDNN pass of y = conv(x, w) with x, w, y contiguous and of one cuDNN dtype; writes y
// (Forward), x (BackwardData) or w (BackwardFilter). cuDNN's descriptors hold ints, so a batch
// whose tensors exceed INT_MAX elements runs in slices of samples (the filter pass adding up
// theirs). False when cuDNN has no kernel for the problem (nothing useful is written then).
bool run_cudnn(ConvPass pass, const Tensor& x, const Tensor& w, const Tensor& y,
               const ConvParams& p, const char* op) {
  const int64_t n = x.size(0);
  const int64_t per_sample = std::max(x.numel() / n, y.numel() / n);
  bool fits = fits_int(per_sample) && fits_int(w.numel()) && fits_int(p.groups);
  for (int64_t i = 0; i < p.spatial(); ++i) {
    const size_t s = static_cast<size_t>(i);
    fits = fits && fits_int(p.padding[s]) && fits_int(p.stride[s]) && fits_int(p.dilation[s]);
  }
  if (!fits) return false;
  const int64_t chunk = std::min<int64_t>(n, INT_MAX / per_sample);
  for (int64_t start = 0; start < n; start += chunk) {
    const int64_t len = std::min(chunk, n - start);
    const Tensor xs = len == n ? x : x.narrow(0, start, len);
    const Tensor ys = len == n ? y : y.narrow(0, start, len);
    if (!run_cudnn_pass(pass, xs, w, ys, p, pass == ConvPass::BackwardFilter && start > 0, op))
      return false;
  }
  return true;
}

// A transposed convolution's input, extended by output_padding / stride zero samples at the end
// of each spatial dim. cuDNN derives a convolution's output size from its input's, and the
// transposed output's extra output_padding rows only match that when output_padding < stride
// (output_padding may reach the dilation instead); the zeros add nothing to the result.
Tensor extend_for_output_padding(const Tensor& x, const ConvParams& p) {
  DimVector sizes(x.sizes().begin(), x.sizes().end());
  bool extend = false;
  for (int64_t i = 0; i < p.spatial(); ++i) {
    const size_t s = static_cast<size_t>(i);
    const int64_t extra = p.output_padding[s] / p.stride[s];
    sizes[static_cast<size_t>(2 + i)] += extra;
    extend = extend || extra > 0;
  }
  if (!extend) return x;
  Tensor out = zeros(sizes, options_of(x.dtype(), x.device()));
  Tensor inner = out;
  for (int64_t i = 0; i < p.spatial(); ++i) inner = inner.narrow(2 + i, 0, x.size(2 + i));
  device_copy(inner, x);
  return out;
}

// The layout cuDNN computes a convolution in: channels-last where the input or the weight is
// (conv::output_format, as on the CPU and in PyTorch), so that NHWC activations are read as they
// are; row-major for transposed convolutions (their output padding is added in row-major
// copies).
MemoryFormat cudnn_format(const Tensor& input, const Tensor& weight, const ConvParams& p) {
  if (p.transposed || input.dim() != 4) return MemoryFormat::Contiguous;
  return ops::conv::output_format(input, weight);
}

// A new tensor of `sizes` dense in `fmt`.
Tensor empty_in(IntList sizes, MemoryFormat fmt, DType dtype, Device device) {
  return empty_strided(sizes, strides_for_memory_format(sizes, fmt), options_of(dtype, device));
}

// `t` itself when dense in `fmt`, else a tensor like it in `fmt` for finish() to copy back.
Tensor dense_in(const Tensor& t, MemoryFormat fmt) {
  return t.is_contiguous(fmt) ? t : empty_in(t.sizes(), fmt, t.dtype(), t.device());
}

// The convolution without bias into `out` when it is dense in the computing layout and of the
// input's dtype (else into a new tensor); undefined when cuDNN has no kernel for it.
Tensor cudnn_convolution(const Tensor& input, const Tensor& weight, const ConvParams& p,
                         const Tensor& out, const char* op) {
  const MemoryFormat fmt = cudnn_format(input, weight, p);
  const Tensor y = out.dtype() == input.dtype()
                       ? dense_in(out, fmt)
                       : empty_in(out.sizes(), fmt, input.dtype(), out.device());
  const Tensor x = input.contiguous(fmt), w = weight.contiguous(fmt);
  const bool ran =
      p.transposed ? run_cudnn(ConvPass::BackwardData, y, w, extend_for_output_padding(x, p), p, op)
                   : run_cudnn(ConvPass::Forward, x, w, y, p, op);
  return ran ? y : Tensor();
}

// ---- the path in kiln ops ----

// Calls f(tap) for every kernel position (one index per spatial dim).
template <typename F>
void for_each_tap(const Tensor& weight, int64_t spatial, F&& f) {
  std::vector<int64_t> tap(static_cast<size_t>(spatial), 0);
  while (true) {
    f(tap);
    int64_t d = spatial - 1;
    for (; d >= 0; --d) {
      const size_t s = static_cast<size_t>(d);
      if (++tap[s] < weight.size(2 + d)) break;
      tap[s] = 0;
    }
    if (d < 0) return;
  }
}

// weight[:, :, tap...]: the [dim 0, dim 1] matrix of one kernel position.
Tensor weight_at(const Tensor& weight, const std::vector<int64_t>& tap) {
  Tensor w = weight;
  for (int64_t t : tap) w = w.select(2, t);
  return w;
}

// `lead` followed by `rest`, as a shape.
DimVector shape_of(std::initializer_list<int64_t> lead, IntList rest) {
  DimVector s(lead);
  for (int64_t v : rest) s.push_back(v);
  return s;
}

// The spatial sizes of a [N, C, spatial...] shape.
IntList spatial_of(IntList sizes) { return IntList(sizes.data() + 2, sizes.size() - 2); }

DimVector ones(int64_t n) { return DimVector(static_cast<size_t>(n), 1); }

// The convolution without bias, in `acc`: out = sum over taps of the tap's slice of the (zero-
// padded) input times the tap's weights, summed over each group's input channels. Transposed,
// each tap's products are added into a strided slice of the output instead (its scatter).
// Memory per tap: batch x out-channels x in-channels-per-group x spatial elements.
Tensor convolution_by_taps(const Tensor& input, const Tensor& weight, const ConvParams& p,
                           IntList out_sizes, DType acc) {
  const int64_t n = input.size(0), groups = p.groups, spatial = p.spatial();
  const TensorOptions opts = options_of(acc, input.device());
  const Tensor x = input.to(acc), w = weight.to(acc);
  const int64_t cig = x.size(1) / groups;  // input channels per group
  if (!p.transposed) {
    const int64_t cog = w.size(0) / groups;
    const IntList out_spatial = spatial_of(out_sizes);
    DimVector padded{n, x.size(1)};
    for (int64_t i = 0; i < spatial; ++i)
      padded.push_back(x.size(2 + i) + 2 * p.padding[static_cast<size_t>(i)]);
    Tensor xp = zeros(padded, opts);
    Tensor inner = xp;
    for (int64_t i = 0; i < spatial; ++i)
      inner = inner.narrow(2 + i, p.padding[static_cast<size_t>(i)], x.size(2 + i));
    inner.copy_(x);
    Tensor sum = zeros(shape_of({n, groups, cog}, out_spatial), opts);
    const DimVector weight_shape = shape_of({1, groups, cog, cig}, ones(spatial));
    const DimVector image_shape = shape_of({n, groups, 1, cig}, out_spatial);
    for_each_tap(w, spatial, [&](const std::vector<int64_t>& tap) {
      Tensor xt = xp;
      for (int64_t i = 0; i < spatial; ++i) {
        const size_t s = static_cast<size_t>(i);
        const int64_t first = tap[s] * p.dilation[s];
        xt = xt.slice(2 + i, first, first + (out_spatial[s] - 1) * p.stride[s] + 1, p.stride[s]);
      }
      sum.add_((xt.reshape(image_shape) * weight_at(w, tap).reshape(weight_shape)).sum(3));
    });
    return sum.reshape(out_sizes);
  }
  // Transposed: weight [C_in, C_out / groups, K...]; output z = i * stride - padding + k *
  // dilation, gathered in a buffer indexed by z + padding and cut to the output afterwards.
  const int64_t cog = w.size(1);
  DimVector buffer{n, groups, cog};
  for (int64_t i = 0; i < spatial; ++i) {
    const size_t s = static_cast<size_t>(i);
    buffer.push_back((x.size(2 + i) - 1) * p.stride[s] + (w.size(2 + i) - 1) * p.dilation[s] + 1 +
                     std::max<int64_t>(0, p.output_padding[s] - p.padding[s]));
  }
  Tensor sum = zeros(buffer, opts);
  const Tensor xg = x.reshape(shape_of({n, groups, 1, cig}, spatial_of(x.sizes())));
  const DimVector weight_shape{groups, cig, cog};
  const DimVector broadcast_shape = shape_of({1, groups, cog, cig}, ones(spatial));
  for_each_tap(w, spatial, [&](const std::vector<int64_t>& tap) {
    const Tensor wt = weight_at(w, tap).reshape(weight_shape).permute({0, 2, 1});
    Tensor target = sum;
    for (int64_t i = 0; i < spatial; ++i) {
      const size_t s = static_cast<size_t>(i);
      const int64_t first = tap[s] * p.dilation[s];
      target =
          target.slice(3 + i, first, first + (x.size(2 + i) - 1) * p.stride[s] + 1, p.stride[s]);
    }
    target.add_((xg * wt.reshape(broadcast_shape)).sum(3));
  });
  Tensor cut = sum;
  for (int64_t i = 0; i < spatial; ++i)
    cut =
        cut.narrow(3 + i, p.padding[static_cast<size_t>(i)], out_sizes[static_cast<size_t>(2 + i)]);
  return cut.reshape(out_sizes);
}

// What the kiln-ops path accumulates in: int64 for integers (wrapping as the CPU's integer
// loops do, once converted back), float32 for the half types.
DType accumulation_dtype(DType dtype) {
  if (!is_floating_point(dtype)) return DType::Int64;
  return dtype == DType::Float64 ? DType::Float64 : DType::Float32;
}

// ---- the ops ----

// bias [C] viewed as [1, C, 1, ...] against an output of rank `ndim`.
Tensor broadcastable_bias(const Tensor& bias, int64_t ndim) {
  DimVector shape = ones(ndim);
  shape[1] = bias.size(0);
  return bias.view(shape);
}

void convolution_cuda(const Stack& args, const std::vector<Tensor>& outs) {
  const char* op = "convolution";
  const Tensor& out = outs[0];
  if (out.numel() == 0) return;
  const Device device = out.device();
  DeviceGuard guard(device.index());
  const DType dtype = args[0].to_tensor().dtype();
  const Tensor input = as_input(args[0].to_tensor(), device, dtype, op);
  const Tensor weight = as_input(args[1].to_tensor(), device, dtype, op);
  const Tensor bias_arg = args[2].to_optional_tensor();
  const Tensor bias = bias_arg.defined() ? as_input(bias_arg, device, dtype, op) : Tensor();
  const ConvParams p = ops::conv::read_params(args, weight.dim() - 2);
  Tensor result;
  if (input.numel() == 0 || weight.numel() == 0) {
    // No products (no input channels, or an empty kernel): every output is the bias, or zero.
    result = zeros(out.sizes(), options_of(dtype, device));
  } else {
    if (cudnn_takes(dtype)) result = cudnn_convolution(input, weight, p, out, op);
    if (!result.defined()) {
      result = convolution_by_taps(input, weight, p, out.sizes(), accumulation_dtype(dtype));
    }
  }
  if (bias.defined()) result.add_(broadcastable_bias(bias.to(result.dtype()), out.dim()));
  if (!result.is_same(out)) device_copy(out, result);
}

void finish(const Tensor& out, const Tensor& result) {
  if (!result.is_same(out)) device_copy(out, result);
}

std::vector<int64_t> all_but_channels(int64_t ndim) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < ndim; ++d) dims.push_back(d);
  return dims;
}

// A transposed convolution whose output_padding reaches its stride somewhere: the gradients'
// convolutions then see output rows cuDNN's size rule does not (extend_for_output_padding).
bool padding_beyond_stride(const ConvParams& p) {
  if (!p.transposed) return false;
  for (int64_t i = 0; i < p.spatial(); ++i) {
    const size_t s = static_cast<size_t>(i);
    if (p.output_padding[s] >= p.stride[s]) return true;
  }
  return false;
}

std::vector<Tensor> convolution_backward_cuda(const Stack& args) {
  const char* op = "convolution_backward";
  static const ops::OpDef& def = ops::OpRegistry::instance().get(op);
  // The meta kernel checks the arguments as the CPU kernel does and makes the gradients the
  // mask asks for, in the dtype and layout the CPU kernel returns (on the input's device).
  std::vector<Tensor> grads = def.custom[static_cast<size_t>(DeviceType::Meta)](args);
  const Tensor& go = args[0].to_tensor();
  const Device device = go.device();
  const DType dtype = go.dtype();
  const Tensor input = as_input(args[1].to_tensor(), device, dtype, op);
  const Tensor weight = as_input(args[2].to_tensor(), device, dtype, op);
  DeviceGuard guard(device.index());
  for (Tensor& g : grads) {
    if (g.defined() && g.device() != device)
      g = empty_strided(g.sizes(), g.strides(), options_of(g.dtype(), device));
  }
  const ConvParams p =
      ops::conv::read_params(Stack(args.begin() + 1, args.begin() + 10), weight.dim() - 2);
  // The gradients still to compute (grad_bias is the sum below).
  std::array<bool, 3> pending{grads[0].defined(), grads[1].defined(), false};
  const bool empty_problem = go.numel() == 0 || input.numel() == 0 || weight.numel() == 0;
  if (cudnn_takes(dtype) && !empty_problem && !padding_beyond_stride(p)) {
    const MemoryFormat fmt = cudnn_format(input, weight, p);
    const Tensor x = input.contiguous(fmt), dy = go.contiguous(fmt), w = weight.contiguous(fmt);
    if (pending[0]) {
      const Tensor gi = dense_in(grads[0], fmt);
      // Transposed, the input is the equivalent convolution's output: its gradient is the
      // forward convolution of grad_output.
      const bool ran = p.transposed ? run_cudnn(ConvPass::Forward, dy, w, gi, p, op)
                                    : run_cudnn(ConvPass::BackwardData, gi, w, dy, p, op);
      if (ran) {
        finish(grads[0], gi);
        pending[0] = false;
      }
    }
    if (pending[1]) {
      const Tensor gw = dense_in(grads[1], fmt);
      const bool ran = p.transposed ? run_cudnn(ConvPass::BackwardFilter, dy, gw, x, p, op)
                                    : run_cudnn(ConvPass::BackwardFilter, x, gw, dy, p, op);
      if (ran) {
        finish(grads[1], gw);
        pending[1] = false;
      }
    }
  }
  if (pending[0] || pending[1]) {
    // Integer dtypes, empty problems and what cuDNN refuses: the gradients as convolutions
    // (convolution_backward's decomposition), which run on CUDA through convolution_cuda.
    const std::vector<Tensor> by_convolutions =
        ops::conv::backward_by_convolutions(go, input, weight, p, pending);
    for (size_t i = 0; i < 2; ++i) {
      if (pending[i]) device_copy(grads[i], by_convolutions[i]);
    }
  }
  if (grads[2].defined()) device_copy(grads[2], go.sum(all_but_channels(go.dim())));
  return grads;
}

}  // namespace

KILN_CUDA_REGISTER(convolution_ops) {
  structured("convolution", convolution_cuda);
  custom("convolution_backward", convolution_backward_cuda);
}

}  // namespace kiln::cuda
