#pragma once
// ResNet-18/34/50 (He et al. 2015) with torchvision's module structure, parameter names and
// initialization: conv1, bn1, relu, maxpool, layer1..layer4 (Sequentials of BasicBlock or
// Bottleneck, each with conv1/bn1/conv2/bn2[/conv3/bn3] and an optional downsample.0/.1), avgpool,
// fc. Convolutions start kaiming_normal(fan_out, relu), batch norms weight 1 and bias 0, fc keeps
// Linear's default. Weights load from torchvision state dicts by name.
#include <kiln/nn/activation.h>
#include <kiln/nn/container.h>
#include <kiln/nn/conv.h>
#include <kiln/nn/linear.h>
#include <kiln/nn/normalization.h>
#include <kiln/nn/pooling.h>

#include <memory>
#include <vector>

namespace kiln::models {

// Two 3x3 convolutions (ResNet-18/34); expansion 1.
class BasicBlock : public nn::Module {
 public:
  static constexpr int64_t expansion = 1;
  // downsample: the shortcut's projection (Sequential(conv 1x1, bn)), or null for identity.
  BasicBlock(int64_t inplanes, int64_t planes, int64_t stride = 1,
             std::shared_ptr<nn::Sequential> downsample = nullptr);
  Tensor forward(const Tensor& input) override;

  std::shared_ptr<nn::Conv2d> conv1, conv2;
  std::shared_ptr<nn::BatchNorm2d> bn1, bn2;
  std::shared_ptr<nn::ReLU> relu;
  std::shared_ptr<nn::Sequential> downsample;
};

// 1x1 -> 3x3 (stride here, as torchvision's "ResNet V1.5") -> 1x1 convolutions (ResNet-50);
// expansion 4.
class Bottleneck : public nn::Module {
 public:
  static constexpr int64_t expansion = 4;
  Bottleneck(int64_t inplanes, int64_t planes, int64_t stride = 1,
             std::shared_ptr<nn::Sequential> downsample = nullptr);
  Tensor forward(const Tensor& input) override;

  std::shared_ptr<nn::Conv2d> conv1, conv2, conv3;
  std::shared_ptr<nn::BatchNorm2d> bn1, bn2, bn3;
  std::shared_ptr<nn::ReLU> relu;
  std::shared_ptr<nn::Sequential> downsample;
};

enum class ResNetBlock { Basic, Bottleneck };

struct ResNetConfig {
  ResNetBlock block = ResNetBlock::Basic;
  std::vector<int64_t> layers = {2, 2, 2, 2};  // blocks per stage (4 stages)
  int64_t num_classes = 1000;
  // torchvision's zero_init_residual: the last BN of each block starts at weight 0.
  bool zero_init_residual = false;
};

// Input (N, 3, H, W) -> logits (N, num_classes).
class ResNet : public nn::Module {
 public:
  explicit ResNet(const ResNetConfig& config);
  Tensor forward(const Tensor& input) override;

  std::shared_ptr<nn::Conv2d> conv1;
  std::shared_ptr<nn::BatchNorm2d> bn1;
  std::shared_ptr<nn::ReLU> relu;
  std::shared_ptr<nn::MaxPool2d> maxpool;
  std::shared_ptr<nn::AdaptiveAvgPool2d> avgpool;
  std::shared_ptr<nn::Sequential> layer1, layer2, layer3, layer4;
  std::shared_ptr<nn::Linear> fc;

 private:
  std::shared_ptr<nn::Sequential> make_layer(ResNetBlock block, int64_t planes, int64_t blocks,
                                             int64_t stride);
  int64_t inplanes_ = 64;
};

std::shared_ptr<ResNet> resnet18(int64_t num_classes = 1000);
std::shared_ptr<ResNet> resnet34(int64_t num_classes = 1000);
std::shared_ptr<ResNet> resnet50(int64_t num_classes = 1000);

}  // namespace kiln::models
