#pragma once
// kiln::nn::init: in-place parameter initializers, as torch.nn.init. Each runs under no_grad and
// returns its argument. Fans follow PyTorch: for a weight (out, in, k...) fan_in = in * prod(k)
// and fan_out = out * prod(k).
#include <kiln/core/tensor.h>

#include <optional>
#include <string_view>
#include <utility>

namespace kiln::nn::init {

// Recommended gain for a nonlinearity: linear/conv*/sigmoid 1, tanh 5/3, relu sqrt(2),
// leaky_relu sqrt(2 / (1 + slope^2)) (slope defaults to 0.01), selu 3/4.
double calculate_gain(std::string_view nonlinearity, std::optional<double> param = std::nullopt);
// (fan_in, fan_out); raises kiln::Error for fewer than 2 dims.
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor);

Tensor uniform_(Tensor tensor, double a = 0.0, double b = 1.0);
Tensor normal_(Tensor tensor, double mean = 0.0, double std = 1.0);
// Normal(mean, std) truncated to [a, b] (inverse-CDF sampling, as PyTorch).
Tensor trunc_normal_(Tensor tensor, double mean = 0.0, double std = 1.0, double a = -2.0,
                     double b = 2.0);
Tensor constant_(Tensor tensor, double value);
Tensor ones_(Tensor tensor);
Tensor zeros_(Tensor tensor);
// Identity matrix for a 2-D tensor.
Tensor eye_(Tensor tensor);
Tensor xavier_uniform_(Tensor tensor, double gain = 1.0);
Tensor xavier_normal_(Tensor tensor, double gain = 1.0);
// mode "fan_in" or "fan_out"; a is the negative slope of leaky_relu.
Tensor kaiming_uniform_(Tensor tensor, double a = 0.0, std::string_view mode = "fan_in",
                        std::string_view nonlinearity = "leaky_relu");
Tensor kaiming_normal_(Tensor tensor, double a = 0.0, std::string_view mode = "fan_in",
                       std::string_view nonlinearity = "leaky_relu");
// A (semi-)orthogonal matrix from the QR decomposition of a normal matrix (R's diagonal made
// positive), times gain; tensors of more than 2 dims are flattened to (size(0), rest).
Tensor orthogonal_(Tensor tensor, double gain = 1.0);

}  // namespace kiln::nn::init
