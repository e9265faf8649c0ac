#include <kiln/nn/functional.h>
#include <kiln/nn/pooling.h>

namespace kiln::nn {

namespace {

std::vector<int64_t> to_vec(IntList v) { return std::vector<int64_t>(v.begin(), v.end()); }

// One number prints as "2", two as "(2, 3)".
std::string size_repr(const std::vector<int64_t>& v) {
  if (v.size() == 1) return std::to_string(v[0]);
  return py_tuple(v);
}

void check_sizes(const char* type_name, const char* what, const std::vector<int64_t>& v) {
  KILN_CHECK(v.size() == 1 || v.size() == 2, "{}: {} must have 1 or 2 elements, got {}", type_name,
             what, v.size());
}

void check_input(const std::string& type_name, const Tensor& input) {
  KILN_CHECK(input.dim() == 3 || input.dim() == 4,
             "{}: expected 3D (C, H, W) or 4D (N, C, H, W) input, got {}D input", type_name,
             input.dim());
}

}  // namespace

MaxPool2d::MaxPool2d(IntList kernel_size_, IntList stride_, IntList padding_, IntList dilation_,
                     bool ceil_mode_)
    : Module("MaxPool2d"),
      kernel_size(to_vec(kernel_size_)),
      stride(stride_.empty() ? to_vec(kernel_size_) : to_vec(stride_)),
      padding(to_vec(padding_)),
      dilation(to_vec(dilation_)),
      ceil_mode(ceil_mode_) {
  check_sizes("MaxPool2d", "kernel_size", kernel_size);
  check_sizes("MaxPool2d", "stride", stride);
  check_sizes("MaxPool2d", "padding", padding);
  check_sizes("MaxPool2d", "dilation", dilation);
}

Tensor MaxPool2d::forward(const Tensor& input) {
  check_input(name(), input);
  return functional::max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode);
}

std::tuple<Tensor, Tensor> MaxPool2d::forward_with_indices(const Tensor& input) {
  check_input(name(), input);
  return functional::max_pool2d_with_indices(input, kernel_size, stride, padding, dilation,
                                             ceil_mode);
}

std::string MaxPool2d::extra_repr() const {
  return fmt::format("kernel_size={}, stride={}, padding={}, dilation={}, ceil_mode={}",
                     size_repr(kernel_size), size_repr(stride), size_repr(padding),
                     size_repr(dilation), py_bool(ceil_mode));
}

AvgPool2d::AvgPool2d(IntList kernel_size_, IntList stride_, IntList padding_, bool ceil_mode_,
                     bool count_include_pad_, std::optional<int64_t> divisor_override_)
    : Module("AvgPool2d"),
      kernel_size(to_vec(kernel_size_)),
      stride(stride_.empty() ? to_vec(kernel_size_) : to_vec(stride_)),
      padding(to_vec(padding_)),
      ceil_mode(ceil_mode_),
      count_include_pad(count_include_pad_),
      divisor_override(divisor_override_) {
  check_sizes("AvgPool2d", "kernel_size", kernel_size);
  check_sizes("AvgPool2d", "stride", stride);
  check_sizes("AvgPool2d", "padding", padding);
}

Tensor AvgPool2d::forward(const Tensor& input) {
  check_input(name(), input);
  return functional::avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                divisor_override);
}

std::string AvgPool2d::extra_repr() const {
  return fmt::format("kernel_size={}, stride={}, padding={}", size_repr(kernel_size),
                     size_repr(stride), size_repr(padding));
}

AdaptiveAvgPool2d::AdaptiveAvgPool2d(IntList output_size_)
    : Module("AdaptiveAvgPool2d"), output_size(to_vec(output_size_)) {
  check_sizes("AdaptiveAvgPool2d", "output_size", output_size);
}

Tensor AdaptiveAvgPool2d::forward(const Tensor& input) {
  check_input(name(), input);
  std::vector<int64_t> size =
      output_size.size() == 1 ? std::vector<int64_t>{output_size[0], output_size[0]} : output_size;
  return functional::adaptive_avg_pool2d(input, size);
}

std::string AdaptiveAvgPool2d::extra_repr() const {
  return "output_size=" + size_repr(output_size);
}

AdaptiveMaxPool2d::AdaptiveMaxPool2d(IntList output_size_)
    : Module("AdaptiveMaxPool2d"), output_size(to_vec(output_size_)) {
  check_sizes("AdaptiveMaxPool2d", "output_size", output_size);
}

Tensor AdaptiveMaxPool2d::forward(const Tensor& input) {
  check_input(name(), input);
  std::vector<int64_t> size =
      output_size.size() == 1 ? std::vector<int64_t>{output_size[0], output_size[0]} : output_size;
  return std::get<0>(functional::adaptive_max_pool2d(input, size));
}

std::string AdaptiveMaxPool2d::extra_repr() const {
  return "output_size=" + size_repr(output_size);
}

}  // namespace kiln::nn
