#include "nn/shape_str.h"

#include <kiln/nn/conv.h>
#include <kiln/nn/functional.h>
#include <kiln/nn/init.h>
#include <kiln/ops/conv.h>
#include <kiln/ops/creation.h>

#include <cmath>

namespace kiln::nn {

namespace {

std::vector<int64_t> expand_param(const std::string& type_name, const char* what, IntList v,
                                  int64_t n) {
  KILN_CHECK(static_cast<int64_t>(v.size()) == 1 || static_cast<int64_t>(v.size()) == n,
             "{}: {} must have 1 or {} elements, got {}", type_name, what, n, v.size());
  if (v.size() == 1) return std::vector<int64_t>(static_cast<size_t>(n), v[0]);
  return std::vector<int64_t>(v.begin(), v.end());
}

}  // namespace

ConvNdBase::ConvNdBase(std::string type_name, int64_t spatial_dims, int64_t in_channels_,
                       int64_t out_channels_, IntList kernel_size_, IntList stride_,
                       IntList padding_, IntList dilation_, bool transposed_,
                       IntList output_padding_, int64_t groups_, bool bias_,
                       std::string padding_mode_)
    : Module(std::move(type_name)),
      in_channels(in_channels_),
      out_channels(out_channels_),
      transposed(transposed_),
      groups(groups_),
      padding_mode(std::move(padding_mode_)),
      spatial_dims_(spatial_dims) {
  const std::string& n = name();
  KILN_CHECK(groups > 0, "{}: groups must be a positive integer, got {}", n, groups);
  KILN_CHECK(in_channels % groups == 0, "{}: in_channels ({}) must be divisible by groups ({})", n,
             in_channels, groups);
  KILN_CHECK(out_channels % groups == 0, "{}: out_channels ({}) must be divisible by groups ({})",
             n, out_channels, groups);
  KILN_CHECK(padding_mode == "zeros" || padding_mode == "reflect" || padding_mode == "replicate" ||
                 padding_mode == "circular",
             "{}: padding_mode must be one of zeros, reflect, replicate, circular, got {}", n,
             padding_mode);
  kernel_size = expand_param(n, "kernel_size", kernel_size_, spatial_dims);
  stride = expand_param(n, "stride", stride_, spatial_dims);
  padding = expand_param(n, "padding", padding_, spatial_dims);
  dilation = expand_param(n, "dilation", dilation_, spatial_dims);
  output_padding = expand_param(n, "output_padding", output_padding_, spatial_dims);
  std::vector<int64_t> shape = transposed
                                   ? std::vector<int64_t>{in_channels, out_channels / groups}
                                   : std::vector<int64_t>{out_channels, in_channels / groups};
  shape.insert(shape.end(), kernel_size.begin(), kernel_size.end());
  weight = register_parameter("weight", kiln::empty(shape));
  bias = register_parameter("bias", bias_ ? kiln::empty({out_channels}) : Tensor());
  reset_parameters();
}

void ConvNdBase::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    auto fans = init::calculate_fan_in_and_fan_out(weight);
    if (fans.first != 0) {
      double bound = 1.0 / std::sqrt(static_cast<double>(fans.first));
      init::uniform_(bias, -bound, bound);
    }
  }
}

void ConvNdBase::check_input(const Tensor& input) const {
  const int64_t d = input.dim();
  KILN_CHECK(d == spatial_dims_ + 1 || d == spatial_dims_ + 2,
             "{}: expected {}-D (unbatched) or {}-D (batched) input, got {}-D input of shape [{}]",
             name(), spatial_dims_ + 1, spatial_dims_ + 2, d, detail::shape_str(input));
  const SymInt c = input.sym_size(d - spatial_dims_ - 1);
  KILN_CHECK(c == in_channels, "{}: expected input with {} channels, got {} (input shape [{}])",
             name(), in_channels, c.str(), detail::shape_str(input));
}

void ConvNdBase::set_padding_string(PaddingString value) {
  const bool same = value == PaddingString::Same;
  for (size_t i = 0; i < padding.size(); ++i) {
    KILN_CHECK(!same || stride[i] == 1,
               "{}: padding='same' is not supported for strided convolutions (stride {})", name(),
               py_tuple(stride));
    padding[i] = same ? dilation[i] * (kernel_size[i] - 1) / 2 : 0;
  }
  padding_string = same ? "same" : "valid";
}

Tensor ConvNdBase::conv_forward(const Tensor& input) const {
  check_input(input);
  if (padding_string == "same" && padding_mode == "zeros") {
    // An even extent pads one more on the right: the op knows how.
    return spatial_dims_ == 1
               ? kiln::conv1d_padding_mode(input, weight, bias, stride, "same", dilation, groups)
               : kiln::conv2d_padding_mode(input, weight, bias, stride, "same", dilation, groups);
  }
  const Tensor x = pad_input(input);
  return spatial_dims_ == 1
             ? functional::conv1d(x, weight, bias, stride, conv_padding(), dilation, groups)
             : functional::conv2d(x, weight, bias, stride, conv_padding(), dilation, groups);
}

Tensor ConvNdBase::pad_input(const Tensor& input) const {
  if (padding_mode == "zeros") return input;
  // F.pad lists the last dim first: (left_w, right_w, left_h, right_h, ...); "same" puts the odd
  // one out on the right, as PyTorch.
  std::vector<int64_t> pads;
  for (int64_t i = spatial_dims_ - 1; i >= 0; --i) {
    const auto d = static_cast<size_t>(i);
    const int64_t left = padding[d];
    const int64_t right =
        padding_string == "same" ? dilation[d] * (kernel_size[d] - 1) - left : left;
    pads.push_back(left);
    pads.push_back(right);
  }
  return functional::pad(input, pads, padding_mode);
}

std::vector<int64_t> ConvNdBase::conv_padding() const {
  if (padding_mode == "zeros") return padding;
  return std::vector<int64_t>(static_cast<size_t>(spatial_dims_), 0);
}

std::string ConvNdBase::extra_repr() const {
  std::string s = fmt::format("{}, {}, kernel_size={}, stride={}", in_channels, out_channels,
                              py_tuple(kernel_size), py_tuple(stride));
  auto all_equal = [](const std::vector<int64_t>& v, int64_t x) {
    for (int64_t e : v)
      if (e != x) return false;
    return true;
  };
  if (!padding_string.empty()) {
    s += ", padding=" + padding_string;
  } else if (!all_equal(padding, 0)) {
    s += ", padding=" + py_tuple(padding);
  }
  if (!all_equal(dilation, 1)) s += ", dilation=" + py_tuple(dilation);
  if (!all_equal(output_padding, 0)) s += ", output_padding=" + py_tuple(output_padding);
  if (groups != 1) s += fmt::format(", groups={}", groups);
  if (!bias.defined()) s += ", bias=False";
  if (padding_mode != "zeros") s += ", padding_mode=" + padding_mode;
  return s;
}

Conv1d::Conv1d(int64_t in_channels, int64_t out_channels, IntList kernel_size, IntList stride,
               IntList padding, IntList dilation, int64_t groups, bool bias,
               std::string padding_mode)
    : ConvNdBase("Conv1d", 1, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 false, 0, groups, bias, std::move(padding_mode)) {}

Conv1d::Conv1d(int64_t in_channels, int64_t out_channels, IntList kernel_size, IntList stride,
               PaddingString padding, IntList dilation, int64_t groups, bool bias,
               std::string padding_mode)
    : ConvNdBase("Conv1d", 1, in_channels, out_channels, kernel_size, stride, 0, dilation, false, 0,
                 groups, bias, std::move(padding_mode)) {
  set_padding_string(padding);
}

Tensor Conv1d::forward(const Tensor& input) { return conv_forward(input); }

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, IntList kernel_size, IntList stride,
               IntList padding, IntList dilation, int64_t groups, bool bias,
               std::string padding_mode)
    : ConvNdBase("Conv2d", 2, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 false, 0, groups, bias, std::move(padding_mode)) {}

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, IntList kernel_size, IntList stride,
               PaddingString padding, IntList dilation, int64_t groups, bool bias,
               std::string padding_mode)
    : ConvNdBase("Conv2d", 2, in_channels, out_channels, kernel_size, stride, 0, dilation, false, 0,
                 groups, bias, std::move(padding_mode)) {
  set_padding_string(padding);
}

Tensor Conv2d::forward(const Tensor& input) { return conv_forward(input); }

ConvTranspose1d::ConvTranspose1d(int64_t in_channels, int64_t out_channels, IntList kernel_size,
                                 IntList stride, IntList padding, IntList output_padding,
                                 int64_t groups, bool bias, IntList dilation)
    : ConvNdBase("ConvTranspose1d", 1, in_channels, out_channels, kernel_size, stride, padding,
                 dilation, true, output_padding, groups, bias, "zeros") {}

Tensor ConvTranspose1d::forward(const Tensor& input) {
  check_input(input);
  return functional::conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups,
                                      dilation);
}

ConvTranspose2d::ConvTranspose2d(int64_t in_channels, int64_t out_channels, IntList kernel_size,
                                 IntList stride, IntList padding, IntList output_padding,
                                 int64_t groups, bool bias, IntList dilation)
    : ConvNdBase("ConvTranspose2d", 2, in_channels, out_channels, kernel_size, stride, padding,
                 dilation, true, output_padding, groups, bias, "zeros") {}

Tensor ConvTranspose2d::forward(const Tensor& input) {
  check_input(input);
  return functional::conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups,
                                      dilation);
}

}  // namespace kiln::nn
