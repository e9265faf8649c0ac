// The structured convolution op: meta (PyTorch's shape checks and output sizes, channels-last
// propagation) and the CPU impl that routes float32 to oneDNN and the rest to im2col + GEMM.
#include "ops/conv/conv_backward.h"
#include "ops/conv/conv_params.h"
#include "ops/conv/conv_samples.h"
#include "ops/conv/gemm_conv.h"
#include "ops/conv/onednn_conv.h"

#include <kiln/ops/conv.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>

namespace kiln::ops {
namespace {

using conv::ConvParams;

std::vector<TensorMeta> convolution_meta(const Stack& args) {
  const Tensor& input = args[0].to_tensor();
  const Tensor& weight = args[1].to_tensor();
  const Tensor bias = args[2].to_optional_tensor();
  KILN_CHECK(weight.dim() >= 3 && weight.dim() <= 5,
             "convolution: expected a 3-, 4- or 5-dimensional weight (1 to 3 spatial dims), got "
             "weight of size {}",
             conv::sizes_str(weight.sym_sizes()));
  const ConvParams p = conv::read_params(args, weight.dim() - 2);
  TensorMeta m;
  m.sizes = conv::output_sizes(input, weight, bias, p);
  m.strides = strides_for_memory_format(SymIntList(m.sizes), conv::output_format(input, weight));
  m.dtype = input.dtype();
  m.device = input.device();
  return {m};
}

// Dense in the contiguous or the channels-last layout (what oneDNN's descriptors can describe).
Tensor dense(const Tensor& t) {
  if (t.is_contiguous()) return t;
  if (t.dim() == 4 && t.is_contiguous(MemoryFormat::ChannelsLast)) return t;
  if (t.dim() == 5 && t.is_contiguous(MemoryFormat::ChannelsLast3d)) return t;
  return t.contiguous();
}

Tensor maybe_to(const Tensor& t, DType dtype) {
  return !t.defined() || t.dtype() == dtype ? t : t.to(dtype);
}

// A tensor of out's sizes in fmt and `dtype`: out itself when it already is one.
Tensor result_buffer(const Tensor& out, MemoryFormat fmt, DType dtype) {
  if (out.dtype() == dtype && out.is_contiguous(fmt)) return out;
  return empty_strided(out.sizes(), strides_for_memory_format(out.sizes(), fmt),
                       TensorOptions(dtype));
}

// bias [C] viewed as [1, C, 1, ...] against an output of rank `ndim`.
Tensor broadcastable_bias(const Tensor& bias, int64_t ndim) {
  DimVector shape(static_cast<size_t>(ndim), 1);
  shape[1] = bias.size(0);
  return bias.view(shape);
}

void convolution_impl(const Stack& args, const std::vector<Tensor>& outs) {
  const Tensor& out = outs[0];
  if (out.numel() == 0) return;
  const Tensor& input_arg = args[0].to_tensor();
  const Tensor& weight_arg = args[1].to_tensor();
  const Tensor bias_arg = args[2].to_optional_tensor();
  const ConvParams p = conv::read_params(args, weight_arg.dim() - 2);
  const DType dtype = input_arg.dtype();
  // Half and bfloat16 compute in float32 (oneDNN's f32 kernels) and round once at the end.
  const bool via_float =
      dtype == DType::Float32 || dtype == DType::Float16 || dtype == DType::BFloat16;
  const DType compute = via_float ? DType::Float32 : dtype;
  Tensor bias = maybe_to(bias_arg, compute);
  if (bias.defined()) bias = bias.contiguous();
  Tensor result;
  if (input_arg.numel() == 0) {
    // No input channels: every output is the bias (or zero).
    result = result_buffer(out, MemoryFormat::Contiguous, compute);
    result.zero_();
    if (bias.defined()) result.add_(broadcastable_bias(bias, out.dim()));
  } else if (compute == DType::Float32) {
    const MemoryFormat fmt = conv::output_format(input_arg, weight_arg);
    Tensor input = maybe_to(input_arg, compute).contiguous(fmt);
    Tensor weight = dense(maybe_to(weight_arg, compute));
    result = result_buffer(out, fmt, compute);
    if (!conv::onednn_convolution(result, input, weight, bias, p, fmt)) {
      // A geometry oneDNN has no kernel for (e.g. output_padding >= stride): the GEMM path.
      Tensor plain = result.is_contiguous() ? result : empty(out.sizes(), TensorOptions(compute));
      conv::gemm_convolution(plain, input.contiguous(), weight.contiguous(), bias, p);
      if (!plain.is_same(result)) result.copy_(plain);
    }
  } else {
    result = result_buffer(out, MemoryFormat::Contiguous, compute);
    conv::gemm_convolution(result, input_arg.contiguous(), weight_arg.contiguous(), bias, p);
  }
  if (!result.is_same(out)) {
    Tensor dst = out;
    dst.copy_(result);
  }
}

}  // namespace

KILN_OP(
    "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, "
    "SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor")
    .meta(convolution_meta)
    .cpu(convolution_impl)
    .derivative(conv::convolution_derivative, DerivativeReads::Inputs)
    .out_variant()
    .tolerance(1e-4, 1e-4)
    .samples(conv::convolution_samples);

}  // namespace kiln::ops

namespace kiln {

Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride,
                   IntList padding, IntList dilation, bool transposed, IntList output_padding,
                   int64_t groups, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::OpRegistry::instance().get("convolution");
  return ops::call1(op,
                    {input, weight, bias.defined() ? ops::IValue(bias) : ops::IValue(), stride,
                     padding, dilation, transposed, output_padding, groups},
                    &loc);
}

}  // namespace kiln
