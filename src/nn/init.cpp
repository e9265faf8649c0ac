#include <kiln/autograd/grad_mode.h>
#include <kiln/nn/init.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/random.h>

#include <cmath>
#include <vector>

namespace kiln::nn::init {

using autograd::NoGradGuard;

double calculate_gain(std::string_view nonlinearity, std::optional<double> param) {
  if (nonlinearity == "linear" || nonlinearity == "conv1d" || nonlinearity == "conv2d" ||
      nonlinearity == "conv3d" || nonlinearity == "conv_transpose1d" ||
      nonlinearity == "conv_transpose2d" || nonlinearity == "conv_transpose3d" ||
      nonlinearity == "sigmoid")
    return 1.0;
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") {
    double slope = param.value_or(0.01);
    return std::sqrt(2.0 / (1.0 + slope * slope));
  }
  if (nonlinearity == "selu") return 3.0 / 4.0;
  KILN_FAIL("calculate_gain: unsupported nonlinearity {}", nonlinearity);
}

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor) {
  KILN_CHECK(tensor.dim() >= 2,
             "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions "
             "(got {} dims)",
             tensor.dim());
  int64_t receptive = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive *= tensor.size(d);
  return {tensor.size(1) * receptive, tensor.size(0) * receptive};
}

namespace {

int64_t calculate_correct_fan(const Tensor& tensor, std::string_view mode) {
  KILN_CHECK(mode == "fan_in" || mode == "fan_out",
             "kaiming init: mode {} not supported, please use one of fan_in, fan_out", mode);
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  return mode == "fan_in" ? fan_in : fan_out;
}

}  // namespace

Tensor uniform_(Tensor tensor, double a, double b) {
  NoGradGuard no_grad;
  tensor.uniform_(a, b);
  return tensor;
}

Tensor normal_(Tensor tensor, double mean, double std) {
  NoGradGuard no_grad;
  tensor.normal_(mean, std);
  return tensor;
}

Tensor trunc_normal_(Tensor tensor, double mean, double std, double a, double b) {
  NoGradGuard no_grad;
  // Uniform in [2l-1, 2u-1] of the normal CDF's values at the bounds, then the inverse CDF.
  auto norm_cdf = [](double x) { return (1.0 + std::erf(x / std::sqrt(2.0))) / 2.0; };
  double l = norm_cdf((a - mean) / std), u = norm_cdf((b - mean) / std);
  tensor.uniform_(2 * l - 1, 2 * u - 1);
  tensor.erfinv_();
  tensor.mul_(std * std::sqrt(2.0));
  tensor.add_(mean);
  tensor.clamp_(a, b);
  return tensor;
}

Tensor constant_(Tensor tensor, double value) {
  NoGradGuard no_grad;
  tensor.fill_(value);
  return tensor;
}

Tensor ones_(Tensor tensor) { return constant_(std::move(tensor), 1.0); }
Tensor zeros_(Tensor tensor) {
  NoGradGuard no_grad;
  tensor.zero_();
  return tensor;
}

Tensor eye_(Tensor tensor) {
  KILN_CHECK(tensor.dim() == 2, "eye_: only tensors with 2 dimensions are supported, got {}",
             tensor.dim());
  NoGradGuard no_grad;
  tensor.copy_(eye(tensor.size(0), tensor.size(1), tensor.dtype()));
  return tensor;
}

Tensor xavier_uniform_(Tensor tensor, double gain) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  double std = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  double a = std::sqrt(3.0) * std;
  return uniform_(std::move(tensor), -a, a);
}

Tensor xavier_normal_(Tensor tensor, double gain) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  double std = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  return normal_(std::move(tensor), 0.0, std);
}

Tensor kaiming_uniform_(Tensor tensor, double a, std::string_view mode,
                        std::string_view nonlinearity) {
  if (tensor.numel() == 0) return tensor;  // PyTorch warns and leaves it
  int64_t fan = calculate_correct_fan(tensor, mode);
  double gain = calculate_gain(nonlinearity, a);
  double std = gain / std::sqrt(static_cast<double>(fan));
  double bound = std::sqrt(3.0) * std;
  return uniform_(std::move(tensor), -bound, bound);
}

Tensor kaiming_normal_(Tensor tensor, double a, std::string_view mode,
                       std::string_view nonlinearity) {
  if (tensor.numel() == 0) return tensor;
  int64_t fan = calculate_correct_fan(tensor, mode);
  double gain = calculate_gain(nonlinearity, a);
  double std = gain / std::sqrt(static_cast<double>(fan));
  return normal_(std::move(tensor), 0.0, std);
}

Tensor orthogonal_(Tensor tensor, double gain) {
  KILN_CHECK(tensor.dim() >= 2,
             "orthogonal_: only tensors with 2 or more dimensions are "
             "supported, got {}",
             tensor.dim());
  if (tensor.numel() == 0) return tensor;
  NoGradGuard no_grad;
  const int64_t rows = tensor.size(0), cols = tensor.numel() / rows;
  // Work on the tall orientation (m >= n): columns of a (m, n) normal matrix, orthonormalized by
  // modified Gram-Schmidt, are Q of the QR decomposition whose R has a positive diagonal -- what
  // PyTorch's `q * sign(diag(r))` produces. Initialization is not an op, so a loop on the host
  // data is fine here.
  const bool transpose = rows < cols;
  const int64_t m = transpose ? cols : rows, n = transpose ? rows : cols;
  std::vector<double> a = randn({m, n}, kFloat64).tolist<double>();  // row-major (m, n)
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t k = 0; k < j; ++k) {
      double dot = 0;
      for (int64_t i = 0; i < m; ++i) dot += a[i * n + j] * a[i * n + k];
      for (int64_t i = 0; i < m; ++i) a[i * n + j] -= dot * a[i * n + k];
    }
    double norm = 0;
    for (int64_t i = 0; i < m; ++i) norm += a[i * n + j] * a[i * n + j];
    norm = std::sqrt(norm);
    for (int64_t i = 0; i < m; ++i) a[i * n + j] /= norm;
  }
  Tensor q = from_vector(a, {m, n}, kFloat64);
  if (transpose) q = q.t();
  tensor.copy_(q.reshape(tensor.sizes()));
  tensor.mul_(gain);
  return tensor;
}

}  // namespace kiln::nn::init
