// convolution_backward: aten's schema; meta; a CPU kernel that runs oneDNN's backward-data and
// backward-weights primitives for float32 (half types through float32) and convolutions for the
// other dtypes and the geometries oneDNN refuses; convolution's derivative; and the
// decomposition into convolutions through which convolution_backward is differentiated.
#include "ops/conv/conv_backward.h"

#include "ops/conv/onednn_conv_backward.h"
#include "ops/samples.h"

#include <kiln/ops/conv.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>

#include <fmt/format.h>

#include <optional>
#include <string>

namespace kiln::ops::conv {
namespace {

// Every dim but the channels (1): what a bias gradient sums over.
std::vector<int64_t> all_but_channels(int64_t ndim) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < ndim; ++d) dims.push_back(d);
  return dims;
}

// t with dims 0 and 1 swapped, as a permute (a prim view, unlike transpose).
Tensor swap_first_dims(const Tensor& t) {
  DimVector order{1, 0};
  for (int64_t d = 2; d < t.dim(); ++d) order.push_back(d);
  return t.permute(order);
}

// The weight gradient as one convolution: the image ([N, G*ci, S...] viewed as batch ci of
// G*N-channel images) convolved by dy ([N, G*co, T...] viewed as G*co filters over N channels)
// with stride and dilation exchanged, giving [ci, G*co, K'...] with K' >= K; narrowed to the
// kernel and transposed to [G*co, ci, K...]. For a transposed convolution the image is its
// grad_output and dy its input (the adjoint swaps them), which yields its [Cin, Cout/G, K...].
Tensor weight_grad(const Tensor& image, const Tensor& dy, const Tensor& weight,
                   const ConvParams& p) {
  const int64_t n = image.size(0), groups = p.groups, ci = image.size(1) / groups;
  const int64_t spatial = p.spatial();
  if (n == 0) return zeros(weight.sizes(), weight.options());
  DimVector split{n, groups, ci}, order{2, 1, 0}, merged{ci, groups * n};
  for (int64_t i = 0; i < spatial; ++i) {
    split.push_back(image.size(2 + i));
    order.push_back(3 + i);
    merged.push_back(image.size(2 + i));
  }
  const Tensor img = image.reshape(split).permute(order).reshape(merged);
  Tensor r = convolution(img, swap_first_dims(dy), Tensor(), p.dilation, p.padding, p.stride, false,
                         std::vector<int64_t>(static_cast<size_t>(spatial), 0), groups);
  for (int64_t i = 0; i < spatial; ++i) {
    if (r.size(2 + i) != weight.size(2 + i)) r = r.narrow(2 + i, 0, weight.size(2 + i));
  }
  return swap_first_dims(r);
}

// The input gradient: the adjoint of the convolution applied to grad_output, i.e. a transposed
// convolution by the same weight (output_padding restores the rows the forward's floor dropped),
// or for a transposed convolution a plain one (narrowed where output_padding >= stride added
// rows the plain convolution sees).
Tensor input_grad(const Tensor& go, const Tensor& input, const Tensor& weight,
                  const ConvParams& p) {
  const int64_t spatial = p.spatial();
  std::vector<int64_t> extra(static_cast<size_t>(spatial), 0);
  if (!p.transposed) {
    for (int64_t i = 0; i < spatial; ++i) {
      const size_t d = static_cast<size_t>(i);
      extra[d] = input.size(2 + i) - ((go.size(2 + i) - 1) * p.stride[d] - 2 * p.padding[d] +
                                      p.dilation[d] * (weight.size(2 + i) - 1) + 1);
    }
    return convolution(go, weight, Tensor(), p.stride, p.padding, p.dilation, true, extra,
                       p.groups);
  }
  Tensor r =
      convolution(go, weight, Tensor(), p.stride, p.padding, p.dilation, false, extra, p.groups);
  for (int64_t i = 0; i < spatial; ++i) {
    if (r.size(2 + i) != input.size(2 + i)) r = r.narrow(2 + i, 0, input.size(2 + i));
  }
  return r;
}

// convolution_backward's arguments 1..9 line up with convolution's 0..8 (bias_sizes in bias's
// place), so convolution's parameter reader serves both.
ConvParams backward_params(const Stack& args, int64_t spatial) {
  return read_params(Stack(args.begin() + 1, args.begin() + 10), spatial);
}

struct BackwardGeometry {
  ConvParams p;
  std::array<bool, 3> mask{};
  MemoryFormat fmt = MemoryFormat::Contiguous;  // grad_input's layout (the convolution's)
  // grad_weight's: the weight's own, so that it becomes the weight's .grad without a copy (a
  // channels-last input with a row-major weight: oneDNN writes either layout at the same cost).
  MemoryFormat weight_fmt = MemoryFormat::Contiguous;
  int64_t bias_size = 0;
};

// Checks the arguments as convolution does, and grad_output's sizes against the output
// convolution would produce.
BackwardGeometry backward_geometry(const Stack& args) {
  const Tensor& go = args[0].to_tensor();
  const Tensor& input = args[1].to_tensor();
  const Tensor& weight = args[2].to_tensor();
  KILN_CHECK(weight.dim() >= 3 && weight.dim() <= 5,
             "convolution_backward: expected a 3-, 4- or 5-dimensional weight, got weight of "
             "size {}",
             sizes_str(weight.sym_sizes()));
  BackwardGeometry g;
  g.p = backward_params(args, weight.dim() - 2);
  const std::vector<int64_t> m = args[10].to_int_list();
  KILN_CHECK(m.size() == 3, "convolution_backward: output_mask must have 3 entries, got {}",
             m.size());
  g.mask = {m[0] != 0, m[1] != 0, m[2] != 0};
  const SymDimVector out = output_sizes(input, weight, Tensor(), g.p);
  KILN_CHECK(SymIntList(out) == go.sym_sizes(),
             "convolution_backward: expected grad_output of size {}, got {}",
             sizes_str(SymIntList(out)), sizes_str(go.sym_sizes()));
  KILN_CHECK_T(TypeError, go.dtype() == input.dtype(),
               "convolution_backward: grad_output type ({}) and input type ({}) should be the "
               "same",
               dtype_name(go.dtype()), dtype_name(input.dtype()));
  g.fmt = output_format(input, weight);
  g.weight_fmt = weight.suggest_memory_format() == g.fmt ? g.fmt : MemoryFormat::Contiguous;
  g.bias_size = out[1].expect_int();
  if (!args[3].is_none()) {
    const std::vector<int64_t> bs = args[3].to_int_list();
    KILN_CHECK(bs.size() == 1 && bs[0] == g.bias_size,
               "convolution_backward: expected bias_sizes [{}], got [{}]", g.bias_size,
               fmt::join(bs, ", "));
  }
  return g;
}

// The gradients' metadata (a masked-out one absent): grad_input like the input and grad_weight
// like the weight, both in the convolution's layout (channels-last stays channels-last).
std::array<std::optional<TensorMeta>, 3> backward_metas(const Stack& args,
                                                        const BackwardGeometry& g) {
  auto like = [&](const Tensor& t, MemoryFormat fmt) {
    TensorMeta m;
    m.sizes = SymDimVector(t.sym_sizes().begin(), t.sym_sizes().end());
    m.strides = strides_for_memory_format(SymIntList(m.sizes), fmt);
    m.dtype = t.dtype();
    m.device = t.device();
    return m;
  };
  const Tensor& input = args[1].to_tensor();
  std::array<std::optional<TensorMeta>, 3> out;
  if (g.mask[0]) out[0] = like(input, g.fmt);
  if (g.mask[1]) out[1] = like(args[2].to_tensor(), g.weight_fmt);
  if (g.mask[2]) {
    out[2] = TensorMeta::contiguous({SymInt(g.bias_size)}, input.dtype(), input.device());
  }
  return out;
}

std::vector<Tensor> backward_meta_kernel(const Stack& args) {
  std::vector<Tensor> out;
  for (const std::optional<TensorMeta>& m : backward_metas(args, backward_geometry(args))) {
    out.push_back(m ? empty_from_meta(*m) : Tensor());
  }
  return out;
}

// Dense in the contiguous or the channels-last layout (what oneDNN's descriptors describe).
Tensor dense(const Tensor& t) {
  if (t.is_contiguous()) return t;
  if (t.dim() == 4 && t.is_contiguous(MemoryFormat::ChannelsLast)) return t;
  if (t.dim() == 5 && t.is_contiguous(MemoryFormat::ChannelsLast3d)) return t;
  return t.contiguous();
}

Tensor as_float(const Tensor& t) { return t.dtype() == DType::Float32 ? t : t.to(DType::Float32); }

Tensor float_buffer(IntList sizes, MemoryFormat fmt) {
  return empty_strided(sizes, strides_for_memory_format(sizes, fmt), TensorOptions(DType::Float32));
}

// float32 through oneDNN; a gradient oneDNN refuses comes from the convolutions instead.
std::vector<Tensor> onednn_backward(const Tensor& go_arg, const Tensor& input_arg,
                                    const Tensor& weight_arg, const BackwardGeometry& g) {
  const Tensor go = as_float(go_arg).contiguous(g.fmt);
  const Tensor input = as_float(input_arg).contiguous(g.fmt);
  const Tensor weight = dense(as_float(weight_arg));
  std::vector<Tensor> out(3);
  std::array<bool, 3> fallback{};
  if (g.mask[0]) {
    out[0] = float_buffer(input.sizes(), g.fmt);
    fallback[0] = !onednn_convolution_backward_data(out[0], go, weight, g.p, g.fmt);
  }
  if (g.mask[1]) {
    out[1] = float_buffer(weight.sizes(), g.weight_fmt);
    if (g.mask[2]) out[2] = empty({g.bias_size}, TensorOptions(DType::Float32));
    fallback[1] = !onednn_convolution_backward_weights(out[1], out[2], go, input, g.p, g.fmt);
    fallback[2] = fallback[1] && g.mask[2];
  } else if (g.mask[2]) {
    out[2] = go.sum(all_but_channels(go.dim()));
  }
  if (fallback[0] || fallback[1]) {
    std::vector<Tensor> ref = backward_by_convolutions(go, input, weight, g.p, fallback);
    for (size_t i = 0; i < 3; ++i) {
      if (fallback[i]) out[i].copy_(ref[i]);
    }
  }
  return out;
}

std::vector<Tensor> backward_cpu_kernel(const Stack& args) {
  const Tensor& go = args[0].to_tensor();
  const Tensor& input = args[1].to_tensor();
  const Tensor& weight = args[2].to_tensor();
  const BackwardGeometry g = backward_geometry(args);
  const DType dtype = input.dtype();
  const bool via_float =
      dtype == DType::Float32 || dtype == DType::Float16 || dtype == DType::BFloat16;
  const bool empty_problem = go.numel() == 0 || input.numel() == 0 || weight.numel() == 0;
  std::vector<Tensor> grads = via_float && !empty_problem
                                  ? onednn_backward(go, input, weight, g)
                                  : backward_by_convolutions(go, input, weight, g.p, g.mask);
  // Into the dtype and layout the meta promises.
  const std::array<std::optional<TensorMeta>, 3> metas = backward_metas(args, g);
  std::vector<Tensor> out(3);
  for (size_t i = 0; i < 3; ++i) {
    if (!metas[i]) continue;
    const MemoryFormat fmt = i == 0 ? g.fmt : i == 1 ? g.weight_fmt : MemoryFormat::Contiguous;
    if (grads[i].dtype() == metas[i]->dtype && grads[i].is_contiguous(fmt)) {
      out[i] = grads[i];
    } else {
      out[i] = empty_from_meta(*metas[i]);
      out[i].copy_(grads[i]);
    }
  }
  return out;
}

std::vector<int64_t> flags(std::array<bool, 3> mask) {
  return {mask[0] ? 1 : 0, mask[1] ? 1 : 0, mask[2] ? 1 : 0};
}

}  // namespace

std::vector<Tensor> backward_by_convolutions(const Tensor& grad_output, const Tensor& input,
                                             const Tensor& weight, const ConvParams& p,
                                             std::array<bool, 3> mask) {
  std::vector<Tensor> out(3);
  if (mask[0]) out[0] = input_grad(grad_output, input, weight, p);
  if (mask[1]) {
    out[1] = p.transposed ? weight_grad(grad_output, input, weight, p)
                          : weight_grad(input, grad_output, weight, p);
  }
  if (mask[2]) out[2] = grad_output.sum(all_but_channels(grad_output.dim()));
  return out;
}

std::vector<Tensor> convolution_derivative(const BackwardArgs& a) {
  static const OpDef& backward = OpRegistry::instance().get("convolution_backward");
  const Tensor& input = a.inputs[0].to_tensor();
  const Tensor& weight = a.inputs[1].to_tensor();
  const Tensor bias = a.inputs[2].to_optional_tensor();
  const ConvParams p = read_params(a.inputs, weight.dim() - 2);
  // Only the gradients some argument asks for (a network's first layer needs no grad_input).
  const std::array<bool, 3> mask{a.needs_grad(0), a.needs_grad(1),
                                 bias.defined() && a.needs_grad(2)};
  const IValue bias_sizes = bias.defined() ? IValue(std::vector<int64_t>{bias.size(0)}) : IValue();
  std::vector<Tensor> g =
      call(backward, {a.grad_outputs[0], input, weight, bias_sizes, p.stride, p.padding, p.dilation,
                      p.transposed, p.output_padding, p.groups, flags(mask)});
  return {g[0], g[1], g[2]};
}

// Every sample asks for all three gradients (a masked-out one is None, which the op-info tests
// do not compare; tests/autograd/test_derivatives_conv.cpp covers masks). `bias` says whether
// bias_sizes is given: aten computes the bias gradient either way.
std::vector<Sample> convolution_backward_samples() {
  using Ints = std::vector<int64_t>;
  std::vector<Sample> out;
  auto add = [&out](Tensor x, Tensor w, Ints stride, Ints padding, Ints dilation, bool transposed,
                    Ints output_padding, int64_t groups, bool bias, uint64_t seed,
                    std::string what) {
    const Stack conv_args{x,        w,          IValue(),       stride, padding,
                          dilation, transposed, output_padding, groups};
    const ConvParams p = read_params(conv_args, w.dim() - 2);
    DimVector go_sizes;
    for (const SymInt& s : output_sizes(x, w, Tensor(), p)) go_sizes.push_back(s.expect_int());
    Tensor go = make_sample(go_sizes, x.dtype(), -2.0, 2.0, seed);
    if (x.dim() == 4 && x.is_contiguous(MemoryFormat::ChannelsLast) && !x.is_contiguous()) {
      go = go.contiguous(MemoryFormat::ChannelsLast);
    }
    const IValue bias_sizes = bias ? IValue(Ints{go_sizes[1]}) : IValue();
    out.push_back({{go, x, w, bias_sizes, stride, padding, dilation, transposed, output_padding,
                    groups, Ints{1, 1, 1}},
                   std::move(what)});
  };
  auto s = [](IntList sizes, uint64_t seed, DType dt) {
    return make_sample(sizes, dt, -2.0, 2.0, seed);
  };
  for (DType dt : {kFloat32, kFloat64}) {
    const std::string d(dtype_name(dt));
    add(s({2, 3, 7, 6}, 1, dt), s({4, 3, 3, 3}, 2, dt), {1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 1,
        true, 3, "2-d with bias " + d);
    add(s({2, 3, 9, 8}, 4, dt), s({5, 3, 3, 2}, 5, dt), {2, 3}, {1, 0}, {1, 2}, false, {0, 0}, 1,
        false, 6, "stride, padding, dilation " + d);
    add(s({1, 4, 6, 6}, 7, dt), s({6, 2, 3, 3}, 8, dt), {1, 1}, {0, 0}, {1, 1}, false, {0, 0}, 2,
        true, 9, "groups 2 " + d);
    add(s({2, 4, 5, 5}, 10, dt), s({4, 1, 3, 3}, 11, dt), {2, 2}, {1, 1}, {1, 1}, false, {0, 0}, 4,
        true, 12, "depthwise " + d);
    add(s({2, 3, 10}, 13, dt), s({5, 3, 4}, 14, dt), {2}, {1}, {2}, false, {0}, 1, true, 15,
        "1-d " + d);
    add(s({1, 2, 5, 4, 4}, 16, dt), s({3, 2, 2, 3, 2}, 17, dt), {1, 2, 1}, {1, 0, 1}, {1, 1, 2},
        false, {0, 0, 0}, 1, false, 18, "3-d " + d);
    add(s({2, 4, 5, 5}, 19, dt), s({4, 3, 3, 3}, 20, dt), {2, 2}, {1, 1}, {1, 1}, true, {1, 1}, 1,
        true, 21, "transposed " + d);
    add(s({1, 4, 4, 5}, 22, dt), s({4, 2, 3, 2}, 23, dt), {2, 1}, {0, 1}, {2, 1}, true, {1, 0}, 2,
        false, 24, "transposed, groups, dilation " + d);
    add(s({2, 3, 7}, 25, dt), s({3, 2, 3}, 26, dt), {3}, {1}, {1}, true, {2}, 1, true, 27,
        "transposed 1-d " + d);
    add(s({2, 8, 5, 5}, 28, dt), s({6, 8, 1, 1}, 29, dt), {2, 2}, {0, 0}, {1, 1}, false, {0, 0}, 1,
        true, 30, "1x1 stride 2 " + d);
  }
  add(s({2, 3, 6, 6}, 31, kFloat32).contiguous(MemoryFormat::ChannelsLast),
      s({4, 3, 3, 3}, 32, kFloat32), {1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 1, true, 33,
      "channels-last");
  add(s({2, 4, 5, 5}, 34, kFloat32).contiguous(MemoryFormat::ChannelsLast),
      s({4, 3, 3, 3}, 35, kFloat32), {2, 2}, {1, 1}, {1, 1}, true, {1, 1}, 1, true, 36,
      "transposed, channels-last");
  add(s({1, 2, 3, 3}, 37, kFloat32), s({2, 2, 3, 3}, 38, kFloat32), {2, 2}, {1, 1}, {3, 3}, true,
      {2, 2}, 1, false, 39, "output_padding >= stride, < dilation");
  add(s({0, 3, 5, 5}, 40, kFloat32), s({4, 3, 3, 3}, 41, kFloat32), {1, 1}, {0, 0}, {1, 1}, false,
      {0, 0}, 1, true, 42, "empty batch");
  add(s({2, 3, 6, 6}, 43, kBFloat16), s({4, 3, 3, 3}, 44, kBFloat16), {1, 1}, {1, 1}, {1, 1}, false,
      {0, 0}, 1, true, 45, "bfloat16");
  // Bad inputs: each must raise in kiln and in PyTorch.
  out.push_back(
      {{s({2, 4, 5, 5}, 46, kFloat32), s({2, 3, 6, 6}, 47, kFloat32), s({4, 3, 3, 3}, 48, kFloat32),
        IValue(), Ints{1, 1}, Ints{0, 0}, Ints{1, 1}, false, Ints{0, 0}, 1, Ints{1, 1, 0}},
       "grad_output of the wrong size"});
  return out;
}

}  // namespace kiln::ops::conv

namespace kiln::ops {

KILN_OP(
    "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, "
    "SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] "
    "output_padding, SymInt groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)")
    .custom(DeviceType::CPU, conv::backward_cpu_kernel)
    .custom(DeviceType::Meta, conv::backward_meta_kernel)
    .decomposition([](const Stack& args) {
      const conv::BackwardGeometry g = conv::backward_geometry(args);
      return conv::backward_by_convolutions(args[0].to_tensor(), args[1].to_tensor(),
                                            args[2].to_tensor(), g.p, g.mask);
    })
    .tolerance(1e-4, 1e-4)
    .samples(conv::convolution_backward_samples);

}  // namespace kiln::ops
