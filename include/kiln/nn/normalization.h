#pragma once
// Normalization layers: BatchNorm1d/2d, LayerNorm, GroupNorm, RMSNorm (torch.nn.modules.batchnorm
// and .normalization). Affine weights start at one, biases at zero.
#include <kiln/nn/module.h>

#include <optional>
#include <vector>

namespace kiln::nn {

// Batch normalization over the channel dim (dim 1). Buffers running_mean (zeros), running_var
// (ones) and num_batches_tracked (int64 scalar) when track_running_stats. In training the batch
// statistics normalize and the running ones move by momentum (the unbiased variance); momentum
// nullopt gives the cumulative average (factor 1 / num_batches_tracked). In eval the running
// statistics normalize (batch statistics when there are none).
class BatchNormBase : public Module {
 public:
  void reset_running_stats();
  void reset_parameters();
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  int64_t num_features;
  double eps;
  std::optional<double> momentum;
  bool affine, track_running_stats;
  Tensor weight, bias;                                    // when affine
  Tensor running_mean, running_var, num_batches_tracked;  // when track_running_stats

 protected:
  BatchNormBase(std::string type_name, int64_t num_features, double eps,
                std::optional<double> momentum, bool affine, bool track_running_stats,
                bool use_bias);
  virtual void check_input_dim(const Tensor& input) const = 0;
};

// Input (N, C) or (N, C, L).
class BatchNorm1d : public BatchNormBase {
 public:
  explicit BatchNorm1d(int64_t num_features, double eps = 1e-5,
                       std::optional<double> momentum = 0.1, bool affine = true,
                       bool track_running_stats = true, bool bias = true)
      : BatchNormBase("BatchNorm1d", num_features, eps, momentum, affine, track_running_stats,
                      bias) {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};

// Input (N, C, H, W).
class BatchNorm2d : public BatchNormBase {
 public:
  explicit BatchNorm2d(int64_t num_features, double eps = 1e-5,
                       std::optional<double> momentum = 0.1, bool affine = true,
                       bool track_running_stats = true, bool bias = true)
      : BatchNormBase("BatchNorm2d", num_features, eps, momentum, affine, track_running_stats,
                      bias) {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};

// Normalizes over the trailing normalized_shape dims.
class LayerNorm : public Module {
 public:
  explicit LayerNorm(std::vector<int64_t> normalized_shape, double eps = 1e-5,
                     bool elementwise_affine = true, bool bias = true);
  explicit LayerNorm(int64_t normalized_shape, double eps = 1e-5, bool elementwise_affine = true,
                     bool bias = true)
      : LayerNorm(std::vector<int64_t>{normalized_shape}, eps, elementwise_affine, bias) {}
  void reset_parameters();
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  std::vector<int64_t> normalized_shape;
  double eps;
  bool elementwise_affine;
  Tensor weight, bias;
};

// Normalizes each of num_groups channel groups of (N, C, *) input; affine per channel.
class GroupNorm : public Module {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true,
            bool bias = true);
  void reset_parameters();
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  int64_t num_groups, num_channels;
  double eps;
  bool affine;
  Tensor weight, bias;
};

// x / sqrt(mean(x^2) + eps) * weight over the trailing normalized_shape dims; eps nullopt uses
// the dtype's machine epsilon, as PyTorch.
class RMSNorm : public Module {
 public:
  explicit RMSNorm(std::vector<int64_t> normalized_shape, std::optional<double> eps = std::nullopt,
                   bool elementwise_affine = true);
  explicit RMSNorm(int64_t normalized_shape, std::optional<double> eps = std::nullopt,
                   bool elementwise_affine = true)
      : RMSNorm(std::vector<int64_t>{normalized_shape}, eps, elementwise_affine) {}
  void reset_parameters();
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  std::vector<int64_t> normalized_shape;
  std::optional<double> eps;
  bool elementwise_affine;
  Tensor weight;
};

}  // namespace kiln::nn
