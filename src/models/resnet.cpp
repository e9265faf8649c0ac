#include <kiln/core/error.h>
#include <kiln/models/resnet.h>
#include <kiln/nn/init.h>
#include <kiln/nn/pooling.h>

#include <string>

namespace kiln::models {

namespace {

std::shared_ptr<nn::Conv2d> conv3x3(int64_t in_planes, int64_t out_planes, int64_t stride) {
  return std::make_shared<nn::Conv2d>(in_planes, out_planes, 3, stride, 1, 1, 1, false);
}

std::shared_ptr<nn::Conv2d> conv1x1(int64_t in_planes, int64_t out_planes, int64_t stride) {
  return std::make_shared<nn::Conv2d>(in_planes, out_planes, 1, stride, 0, 1, 1, false);
}

}  // namespace

BasicBlock::BasicBlock(int64_t inplanes, int64_t planes, int64_t stride,
                       std::shared_ptr<nn::Sequential> downsample_)
    : nn::Module("BasicBlock") {
  conv1 = register_module("conv1", conv3x3(inplanes, planes, stride));
  bn1 = register_module("bn1", std::make_shared<nn::BatchNorm2d>(planes));
  relu = register_module("relu", std::make_shared<nn::ReLU>(true));
  conv2 = register_module("conv2", conv3x3(planes, planes, 1));
  bn2 = register_module("bn2", std::make_shared<nn::BatchNorm2d>(planes));
  if (downsample_) downsample = register_module("downsample", std::move(downsample_));
}

Tensor BasicBlock::forward(const Tensor& input) {
  Tensor out = relu->forward(bn1->forward(conv1->forward(input)));
  out = bn2->forward(conv2->forward(out));
  Tensor identity = downsample ? downsample->forward(input) : input;
  return relu->forward(out + identity);
}

Bottleneck::Bottleneck(int64_t inplanes, int64_t planes, int64_t stride,
                       std::shared_ptr<nn::Sequential> downsample_)
    : nn::Module("Bottleneck") {
  conv1 = register_module("conv1", conv1x1(inplanes, planes, 1));
  bn1 = register_module("bn1", std::make_shared<nn::BatchNorm2d>(planes));
  conv2 = register_module("conv2", conv3x3(planes, planes, stride));
  bn2 = register_module("bn2", std::make_shared<nn::BatchNorm2d>(planes));
  conv3 = register_module("conv3", conv1x1(planes, planes * expansion, 1));
  bn3 = register_module("bn3", std::make_shared<nn::BatchNorm2d>(planes * expansion));
  relu = register_module("relu", std::make_shared<nn::ReLU>(true));
  if (downsample_) downsample = register_module("downsample", std::move(downsample_));
}

Tensor Bottleneck::forward(const Tensor& input) {
  Tensor out = relu->forward(bn1->forward(conv1->forward(input)));
  out = relu->forward(bn2->forward(conv2->forward(out)));
  out = bn3->forward(conv3->forward(out));
  Tensor identity = downsample ? downsample->forward(input) : input;
  return relu->forward(out + identity);
}

ResNet::ResNet(const ResNetConfig& config) : nn::Module("ResNet") {
  KILN_CHECK(config.layers.size() == 4, "ResNet: layers must list 4 stages, got {}",
             config.layers.size());
  KILN_CHECK(config.num_classes > 0, "ResNet: num_classes must be positive, got {}",
             config.num_classes);
  conv1 =
      register_module("conv1", std::make_shared<nn::Conv2d>(3, inplanes_, 7, 2, 3, 1, 1, false));
  bn1 = register_module("bn1", std::make_shared<nn::BatchNorm2d>(inplanes_));
  relu = register_module("relu", std::make_shared<nn::ReLU>(true));
  maxpool = register_module("maxpool", std::make_shared<nn::MaxPool2d>(3, 2, 1));
  layer1 = register_module("layer1", make_layer(config.block, 64, config.layers[0], 1));
  layer2 = register_module("layer2", make_layer(config.block, 128, config.layers[1], 2));
  layer3 = register_module("layer3", make_layer(config.block, 256, config.layers[2], 2));
  layer4 = register_module("layer4", make_layer(config.block, 512, config.layers[3], 2));
  avgpool = register_module("avgpool", std::make_shared<nn::AdaptiveAvgPool2d>(IntList{1, 1}));
  int64_t expansion =
      config.block == ResNetBlock::Basic ? BasicBlock::expansion : Bottleneck::expansion;
  fc = register_module("fc", std::make_shared<nn::Linear>(512 * expansion, config.num_classes));

  // torchvision's initialization.
  for (const auto& m : modules()) {
    if (auto conv = std::dynamic_pointer_cast<nn::Conv2d>(m)) {
      nn::init::kaiming_normal_(conv->weight, 0.0, "fan_out", "relu");
    } else if (auto bn = std::dynamic_pointer_cast<nn::BatchNorm2d>(m)) {
      nn::init::ones_(bn->weight);
      nn::init::zeros_(bn->bias);
    }
  }
  if (config.zero_init_residual) {
    for (const auto& m : modules()) {
      if (auto block = std::dynamic_pointer_cast<Bottleneck>(m))
        nn::init::zeros_(block->bn3->weight);
      if (auto block = std::dynamic_pointer_cast<BasicBlock>(m))
        nn::init::zeros_(block->bn2->weight);
    }
  }
}

std::shared_ptr<nn::Sequential> ResNet::make_layer(ResNetBlock block, int64_t planes,
                                                   int64_t blocks, int64_t stride) {
  KILN_CHECK(blocks > 0, "ResNet: every stage needs at least one block, got {}", blocks);
  int64_t expansion = block == ResNetBlock::Basic ? BasicBlock::expansion : Bottleneck::expansion;
  std::shared_ptr<nn::Sequential> downsample;
  if (stride != 1 || inplanes_ != planes * expansion) {
    downsample =
        std::make_shared<nn::Sequential>(conv1x1(inplanes_, planes * expansion, stride),
                                         std::make_shared<nn::BatchNorm2d>(planes * expansion));
  }
  auto layer = std::make_shared<nn::Sequential>();
  for (int64_t i = 0; i < blocks; ++i) {
    int64_t s = i == 0 ? stride : 1;
    auto ds = i == 0 ? downsample : nullptr;
    if (block == ResNetBlock::Basic) {
      layer->push_back(std::make_shared<BasicBlock>(inplanes_, planes, s, ds));
    } else {
      layer->push_back(std::make_shared<Bottleneck>(inplanes_, planes, s, ds));
    }
    inplanes_ = planes * expansion;
  }
  return layer;
}

Tensor ResNet::forward(const Tensor& input) {
  KILN_CHECK(input.dim() == 4 && input.sym_size(1) == 3,
             "ResNet: expected input (N, 3, H, W), got {} dims with {} channels", input.dim(),
             input.dim() >= 2 ? input.sym_size(1).str() : "no");
  Tensor x = maxpool->forward(relu->forward(bn1->forward(conv1->forward(input))));
  x = layer4->forward(layer3->forward(layer2->forward(layer1->forward(x))));
  x = avgpool->forward(x).flatten(1);
  return fc->forward(x);
}

std::shared_ptr<ResNet> resnet18(int64_t num_classes) {
  return std::make_shared<ResNet>(ResNetConfig{ResNetBlock::Basic, {2, 2, 2, 2}, num_classes});
}

std::shared_ptr<ResNet> resnet34(int64_t num_classes) {
  return std::make_shared<ResNet>(ResNetConfig{ResNetBlock::Basic, {3, 4, 6, 3}, num_classes});
}

std::shared_ptr<ResNet> resnet50(int64_t num_classes) {
  return std::make_shared<ResNet>(ResNetConfig{ResNetBlock::Bottleneck, {3, 4, 6, 3}, num_classes});
}

}  // namespace kiln::models
