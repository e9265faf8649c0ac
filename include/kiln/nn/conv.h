#pragma once
// Convolution layers: Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
// (torch.nn.modules.conv). Constructor arguments follow PyTorch's positional order; a
// one-element list (or a plain int) applies to every spatial dim.
#include <kiln/nn/module.h>

#include <string>
#include <vector>

namespace kiln::nn {

// padding="valid" / padding="same" as libtorch spells them (torch::kValid, torch::kSame): an enum,
// so that a plain 0 still means numeric padding.
enum class PaddingString { Valid, Same };
inline constexpr PaddingString kValid = PaddingString::Valid;
inline constexpr PaddingString kSame = PaddingString::Same;

// The shared part of ConvNd / ConvTransposeNd. Weight (out, in / groups, k...) for a convolution,
// (in, out / groups, k...) for a transposed one; both kaiming_uniform(a = sqrt(5)) with bias
// U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = weight.size(1) * prod(k), as PyTorch.
class ConvNdBase : public Module {
 public:
  void reset_parameters();
  std::string extra_repr() const override;

  int64_t in_channels, out_channels;
  std::vector<int64_t> kernel_size, stride, padding, dilation, output_padding;
  bool transposed;
  int64_t groups;
  std::string padding_mode;  // "zeros", "reflect", "replicate" or "circular"
  // "same" or "valid" when padding was given as a string (then `padding` holds the left side of
  // each dim's padding), "" otherwise.
  std::string padding_string;
  Tensor weight, bias;

 protected:
  ConvNdBase(std::string type_name, int64_t spatial_dims, int64_t in_channels, int64_t out_channels,
             IntList kernel_size, IntList stride, IntList padding, IntList dilation,
             bool transposed, IntList output_padding, int64_t groups, bool bias,
             std::string padding_mode);
  // padding=kSame/kValid: checks the stride and sets `padding`.
  void set_padding_string(PaddingString value);
  // input padded per padding_mode when it is not "zeros" (then the conv itself pads nothing).
  Tensor pad_input(const Tensor& input) const;
  // A convolution's forward: padding per padding_mode, numbers or string.
  Tensor conv_forward(const Tensor& input) const;
  std::vector<int64_t> conv_padding() const;
  void check_input(const Tensor& input) const;
  int64_t spatial_dims_;
};

class Conv1d : public ConvNdBase {
 public:
  Conv1d(int64_t in_channels, int64_t out_channels, IntList kernel_size, IntList stride = 1,
         IntList padding = 0, IntList dilation = 1, int64_t groups = 1, bool bias = true,
         std::string padding_mode = "zeros");
  // padding=kSame (output as long as the input; stride 1) or kValid (no padding).
  Conv1d(int64_t in_channels, int64_t out_channels, IntList kernel_size, IntList stride,
         PaddingString padding, IntList dilation = 1, int64_t groups = 1, bool bias = true,
         std::string padding_mode = "zeros");
  Tensor forward(const Tensor& input) override;
};

class Conv2d : public ConvNdBase {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, IntList kernel_size, IntList stride = 1,
         IntList padding = 0, IntList dilation = 1, int64_t groups = 1, bool bias = true,
         std::string padding_mode = "zeros");
  // padding=kSame (output as long as the input; stride 1) or kValid (no padding).
  Conv2d(int64_t in_channels, int64_t out_channels, IntList kernel_size, IntList stride,
         PaddingString padding, IntList dilation = 1, int64_t groups = 1, bool bias = true,
         std::string padding_mode = "zeros");
  Tensor forward(const Tensor& input) override;
};

class ConvTranspose1d : public ConvNdBase {
 public:
  ConvTranspose1d(int64_t in_channels, int64_t out_channels, IntList kernel_size,
                  IntList stride = 1, IntList padding = 0, IntList output_padding = 0,
                  int64_t groups = 1, bool bias = true, IntList dilation = 1);
  Tensor forward(const Tensor& input) override;
};

class ConvTranspose2d : public ConvNdBase {
 public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, IntList kernel_size,
                  IntList stride = 1, IntList padding = 0, IntList output_padding = 0,
                  int64_t groups = 1, bool bias = true, IntList dilation = 1);
  Tensor forward(const Tensor& input) override;
};

}  // namespace kiln::nn
