// Convolutions on a weight packed ahead of time into oneDNN's blocked layout (inference
// freezing's weight pre-packing): _pack_convolution_weight reorders a weight once for one input
// geometry; _convolution_packed is convolution reading that packed copy instead of reordering the
// weight on every call. The packed copy is only a hint: a geometry whose primitive wants another
// layout (another thread count, a dtype oneDNN does not run) computes from the weight itself.
#include "ops/conv/conv_params.h"
#include "ops/conv/onednn_conv.h"
#include "ops/samples.h"

#include <kiln/ops/conv.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>

namespace kiln::ops {
namespace {

using conv::ConvParams;

// convolution's stack (not transposed, no output padding) from the two ops' arguments.
Stack convolution_args(const Tensor& input, const Tensor& weight, const IValue& bias,
                       const IValue& stride, const IValue& padding, const IValue& dilation,
                       const IValue& groups) {
  const std::vector<int64_t> no_output_padding(static_cast<size_t>(weight.dim() - 2), 0);
  return {input, weight, bias, stride, padding, dilation, false, no_output_padding, groups};
}

// A tensor of `sizes` (contiguous) on the meta device: a geometry without data.
Tensor meta_tensor(IntList sizes, DType dtype) {
  return empty(sizes, TensorOptions().dtype(dtype).device(Device::meta()));
}

// _pack_convolution_weight's geometry: meta input and output of the convolution it packs for.
struct PackGeometry {
  Tensor input, out;
  ConvParams params;
  bool has_bias = false;
  MemoryFormat format = MemoryFormat::Contiguous;  // of the activations
};

PackGeometry pack_geometry(const Stack& args) {
  const Tensor& weight = args[0].to_tensor();
  PackGeometry g;
  g.input = meta_tensor(args[1].to_int_list(), weight.dtype());
  g.has_bias = args[2].to_bool();
  if (args[7].to_bool()) {
    KILN_CHECK(weight.dim() == 4,
               "_pack_convolution_weight: channels_last needs a 4-dimensional weight, got {}-D",
               weight.dim());
    g.format = MemoryFormat::ChannelsLast;
  }
  const Stack conv_args =
      convolution_args(g.input, weight, IValue(), args[3], args[4], args[5], args[6]);
  g.params = conv::read_params(conv_args, weight.dim() - 2);
  const Tensor bias = g.has_bias ? meta_tensor({weight.size(0)}, weight.dtype()) : Tensor();
  SymDimVector sizes = conv::output_sizes(g.input, weight, bias, g.params);
  DimVector out_sizes;
  for (const SymInt& s : sizes) out_sizes.push_back(s.raw());
  g.out = meta_tensor(out_sizes, weight.dtype());
  return g;
}

// Bytes of the packed weight: 0 where nothing is packed (not float32, or oneDNN reads the weight
// as it is). The same on the meta device as on the CPU (the only device with a kernel).
int64_t packed_bytes(const Tensor& weight, const PackGeometry& g) {
  if (weight.dtype() != DType::Float32) return 0;
  const Tensor dense = weight.is_contiguous() ? weight : meta_tensor(weight.sizes(), kFloat32);
  return conv::onednn_packed_weight_bytes(g.out, g.input, dense, g.has_bias, g.params, g.format);
}

std::vector<TensorMeta> pack_meta(const Stack& args) {
  const Tensor& weight = args[0].to_tensor();
  KILN_CHECK(weight.dim() >= 3 && weight.dim() <= 5,
             "_pack_convolution_weight: expected a 3-, 4- or 5-dimensional weight, got {}-D",
             weight.dim());
  const PackGeometry g = pack_geometry(args);
  return {TensorMeta::contiguous({packed_bytes(weight, g)}, DType::UInt8, weight.device())};
}

void pack_impl(const Stack& args, const std::vector<Tensor>& outs) {
  if (outs[0].numel() == 0) return;
  const PackGeometry g = pack_geometry(args);
  conv::onednn_pack_weight(outs[0], g.out, g.input, args[0].to_tensor().contiguous(), g.has_bias,
                           g.params, g.format);
}

// _convolution_packed's activation argument.
conv::ConvActivation activation_of(const IValue& arg) {
  const std::string& name = arg.to_string();
  if (name == "none") return conv::ConvActivation::None;
  if (name == "relu") return conv::ConvActivation::Relu;
  KILN_CHECK(false, "_convolution_packed: expected activation \"none\" or \"relu\", got \"{}\"",
             name);
  return conv::ConvActivation::None;
}

std::vector<TensorMeta> packed_convolution_meta(const Stack& args) {
  activation_of(args[8]);
  const Tensor& packed = args[2].to_tensor();
  KILN_CHECK(packed.dtype() == DType::UInt8 && packed.dim() == 1,
             "_convolution_packed: expected a 1-D uint8 packed weight, got {}-D {}", packed.dim(),
             dtype_name(packed.dtype()));
  const auto& op = OpRegistry::instance().get("convolution");
  return op.meta(convolution_args(args[0].to_tensor(), args[1].to_tensor(), args[3], args[4],
                                  args[5], args[6], args[7]));
}

void packed_convolution_impl(const Stack& args, const std::vector<Tensor>& outs) {
  const Tensor& out = outs[0];
  if (out.numel() == 0) return;
  const Tensor& input = args[0].to_tensor();
  const Tensor& weight = args[1].to_tensor();
  const Tensor& packed = args[2].to_tensor();
  const Tensor bias = args[3].to_optional_tensor();
  Stack conv_args = convolution_args(input, weight, args[3], args[4], args[5], args[6], args[7]);
  // oneDNN on the activations' layout as the convolution op decides it (the packed weight is for
  // that layout), when input, output and a row-major weight are dense in it.
  const MemoryFormat format = conv::output_format(input, weight);
  const conv::ConvActivation activation = activation_of(args[8]);
  const bool onednn_path =
      input.dtype() == DType::Float32 && weight.dtype() == DType::Float32 &&
      input.is_contiguous(format) && weight.is_contiguous() && out.is_contiguous(format) &&
      (!bias.defined() || (bias.dtype() == DType::Float32 && bias.is_contiguous()));
  if (onednn_path) {
    const ConvParams p = conv::read_params(conv_args, weight.dim() - 2);
    if (conv::onednn_convolution(out, input, weight, bias, p, format, packed, activation)) return;
  }
  // Otherwise the convolution op's own kernel (straight to it: this runs below autograd).
  const auto& op = OpRegistry::instance().get("convolution");
  Tensor result = call_kernel(op, conv_args).at(0);
  if (activation == conv::ConvActivation::Relu) {
    static const auto& relu = OpRegistry::instance().get("relu");
    Stack relu_args{result};
    result = call_kernel(relu, relu_args).at(0);
  }
  Tensor dst = out;
  dst.copy_(result);
}

// A weight packed for `input` (as freezing packs it).
Tensor pack_for(const Tensor& input, const Tensor& weight, bool has_bias, IntList stride,
                IntList padding, int64_t groups, bool channels_last = false) {
  const auto& op = OpRegistry::instance().get("_pack_convolution_weight");
  const std::vector<int64_t> dilation(static_cast<size_t>(weight.dim() - 2), 1);
  return call1(op, {weight, input.sizes().vec(), has_bias, stride.vec(), padding.vec(), dilation,
                    groups, channels_last});
}

std::vector<Sample> pack_samples() {
  const std::vector<int64_t> one = {1, 1}, dilation = {1, 1};
  return {
      {{make_sample({8, 3, 3, 3}, kFloat32), std::vector<int64_t>{2, 3, 10, 10}, true, one, one,
        dilation, int64_t{1}},
       "3x3, with bias"},
      {{make_sample({4, 4, 1, 1}, kFloat32), std::vector<int64_t>{1, 4, 5, 5}, false, one,
        std::vector<int64_t>{0, 0}, dilation, int64_t{1}},
       "1x1 (read as it is: nothing packed)"},
      {{make_sample({4, 2, 3, 3}, kFloat64), std::vector<int64_t>{1, 4, 6, 6}, false, one, one,
        dilation, int64_t{2}},
       "float64 (nothing packed)"},
      {{make_sample({8, 3, 3, 3}, kFloat32), std::vector<int64_t>{2, 3, 10, 10}, false, one, one,
        dilation, int64_t{1}, true},
       "3x3, for channels-last activations"},
      {{make_sample({4, 4, 1, 1}, kFloat32), std::vector<int64_t>{1, 4, 5, 5}, true, one,
        std::vector<int64_t>{0, 0}, dilation, int64_t{1}, true},
       "1x1, for channels-last activations"},
  };
}

std::vector<Sample> packed_convolution_samples() {
  const std::vector<int64_t> one = {1, 1}, two = {2, 2}, zero = {0, 0};
  const Tensor x = make_sample({2, 3, 10, 10}, kFloat32, -3, 3, 1);
  const Tensor w = make_sample({8, 3, 3, 3}, kFloat32, -1, 1, 2);
  const Tensor b = make_sample({8}, kFloat32, -1, 1, 3);
  const Tensor x64 = make_sample({1, 4, 6, 6}, kFloat64, -3, 3, 4);
  const Tensor w64 = make_sample({4, 2, 3, 3}, kFloat64, -1, 1, 5);
  const Tensor strided = make_sample({2, 3, 12, 12}, kFloat32, -3, 3, 6);
  const Tensor channels_last = x.contiguous(MemoryFormat::ChannelsLast);
  const Tensor w1 = make_sample({8, 3, 1, 1}, kFloat32, -1, 1, 7);
  return {
      {{x, w, pack_for(x, w, true, one, one, 1), b, one, one, one, int64_t{1}},
       "3x3 with bias, packed"},
      {{x, w, pack_for(x, w, false, two, zero, 1), Tensor(), two, zero, one, int64_t{1}},
       "stride 2, packed"},
      {{x, w, pack_for(x, w, false, one, one, 1), b, one, one, one, int64_t{1}},
       "packed for no bias, called with one: unpacked"},
      {{x, w, empty({0}, TensorOptions(kUInt8)), b, one, one, one, int64_t{1}}, "nothing packed"},
      {{x64, w64, pack_for(x64, w64, false, one, one, 2), Tensor(), one, one, one, int64_t{2}},
       "float64 groups 2 (the convolution op)"},
      {{strided.slice(2, 0, 10).slice(3, 0, 10), w, pack_for(x, w, true, one, one, 1), b, one, one,
        one, int64_t{1}},
       "strided input: unpacked"},
      {{channels_last, w, pack_for(channels_last, w, true, one, one, 1, true), b, one, one, one,
        int64_t{1}},
       "channels-last, packed"},
      {{channels_last, w1, pack_for(channels_last, w1, false, one, zero, 1, true), Tensor(), one,
        zero, one, int64_t{1}},
       "channels-last 1x1, packed"},
      {{channels_last, w, pack_for(x, w, true, one, one, 1), b, one, one, one, int64_t{1}},
       "channels-last, packed for row-major"},
      {{x, w, pack_for(channels_last, w, false, two, zero, 1, true), Tensor(), two, zero, one,
        int64_t{1}},
       "row-major, packed for channels-last"},
      {{channels_last, w, pack_for(channels_last, w, true, one, one, 1, true), b, one, one, one,
        int64_t{1}, std::string("relu")},
       "channels-last, packed, relu"},
      {{x, w, pack_for(x, w, false, one, one, 1), Tensor(), one, one, one, int64_t{1},
        std::string("relu")},
       "row-major, packed, relu"},
      {{x64, w64, empty({0}, TensorOptions(kUInt8)), Tensor(), one, one, one, int64_t{2},
        std::string("relu")},
       "float64 relu (the convolution op, then relu)"},
  };
}

}  // namespace

KILN_OP(
    "_pack_convolution_weight(Tensor weight, SymInt[] input_size, bool has_bias, SymInt[] stride, "
    "SymInt[] padding, SymInt[] dilation, SymInt groups, bool channels_last=False) -> Tensor")
    .meta(pack_meta)
    .cpu(pack_impl)
    .not_differentiable()
    .samples(pack_samples);

KILN_OP(
    "_convolution_packed(Tensor input, Tensor weight, Tensor packed_weight, Tensor? bias, "
    "SymInt[] stride, SymInt[] padding, SymInt[] dilation, SymInt groups, "
    "str activation=\"none\") -> Tensor")
    .meta(packed_convolution_meta)
    .cpu(packed_convolution_impl)
    .not_differentiable()
    .tolerance(1e-4, 1e-4)
    .samples(packed_convolution_samples);

}  // namespace kiln::ops
