#pragma once
// Convolutions (PyTorch's torch.nn.functional.conv*): the structured core op `convolution` and
// the conv{1,2,3}d / conv_transpose{1,2,3}d composites over it. float32 runs through oneDNN,
// float64 and integer dtypes through im2col + GEMM, float16/bfloat16 compute in float32.
// Channels-last inputs (or weights) give channels-last outputs.
#include <kiln/core/tensor.h>

#include <kiln/core/source_location.h>
#include <concepts>
#include <string_view>
#include <type_traits>

namespace kiln {

Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride,
                   IntList padding, IntList dilation, bool transposed, IntList output_padding,
                   int64_t groups,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current());

// Inputs are (N, C, spatial...) or unbatched (C, spatial...); a one-element list applies to every
// spatial dim. An undefined bias means none.
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
              IntList stride = 1, IntList padding = 0, IntList dilation = 1, int64_t groups = 1,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
              IntList stride = 1, IntList padding = 0, IntList dilation = 1, int64_t groups = 1,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
              IntList stride = 1, IntList padding = 0, IntList dilation = 1, int64_t groups = 1,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());

// padding "valid" (none) or "same" (output size = input size; stride 1 only; an even extent
// gets its extra padding on the right, as PyTorch does).
Tensor conv1d_padding_mode(const Tensor& input, const Tensor& weight, const Tensor& bias,
                           IntList stride, std::string_view padding, IntList dilation,
                           int64_t groups,
                           const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor conv2d_padding_mode(const Tensor& input, const Tensor& weight, const Tensor& bias,
                           IntList stride, std::string_view padding, IntList dilation,
                           int64_t groups,
                           const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor conv3d_padding_mode(const Tensor& input, const Tensor& weight, const Tensor& bias,
                           IntList stride, std::string_view padding, IntList dilation,
                           int64_t groups,
                           const kiln::SourceLocation& loc = kiln::SourceLocation::current());

// conv2d(x, w, b, 1, "same"): the string overloads, as templates so that a literal 0 padding
// still picks the IntList overloads above.
template <typename S>
requires std::convertible_to<S, std::string_view> &&(!std::is_arithmetic_v<S>)Tensor
    conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride,
           const S& padding, IntList dilation = 1, int64_t groups = 1,
           const kiln::SourceLocation& loc = kiln::SourceLocation::current()) {
  return conv1d_padding_mode(input, weight, bias, stride, padding, dilation, groups, loc);
}
template <typename S>
requires std::convertible_to<S, std::string_view> &&(!std::is_arithmetic_v<S>)Tensor
    conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride,
           const S& padding, IntList dilation = 1, int64_t groups = 1,
           const kiln::SourceLocation& loc = kiln::SourceLocation::current()) {
  return conv2d_padding_mode(input, weight, bias, stride, padding, dilation, groups, loc);
}
template <typename S>
requires std::convertible_to<S, std::string_view> &&(!std::is_arithmetic_v<S>)Tensor
    conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride,
           const S& padding, IntList dilation = 1, int64_t groups = 1,
           const kiln::SourceLocation& loc = kiln::SourceLocation::current()) {
  return conv3d_padding_mode(input, weight, bias, stride, padding, dilation, groups, loc);
}

// Weight (C_in, C_out / groups, k...); argument order as in PyTorch (dilation last).
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                        IntList stride = 1, IntList padding = 0, IntList output_padding = 0,
                        int64_t groups = 1, IntList dilation = 1,
                        const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                        IntList stride = 1, IntList padding = 0, IntList output_padding = 0,
                        int64_t groups = 1, IntList dilation = 1,
                        const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                        IntList stride = 1, IntList padding = 0, IntList output_padding = 0,
                        int64_t groups = 1, IntList dilation = 1,
                        const kiln::SourceLocation& loc = kiln::SourceLocation::current());

}  // namespace kiln
