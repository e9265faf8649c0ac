#include <kiln/autograd/grad_mode.h>
#include <kiln/core/error.h>
#include <kiln/models/vit.h>
#include <kiln/nn/functional.h>
#include <kiln/nn/init.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/shape.h>

#include <cmath>
#include <string>

#include <fmt/format.h>

namespace kiln::models {

EncoderBlock::EncoderBlock(int64_t num_heads, int64_t hidden_dim, int64_t mlp_dim, double dropout_p,
                           double attention_dropout)
    : nn::Module("EncoderBlock") {
  ln_1 = register_module("ln_1", std::make_shared<nn::LayerNorm>(hidden_dim, 1e-6));
  self_attention = register_module(
      "self_attention", std::make_shared<nn::MultiheadAttention>(
                            hidden_dim, num_heads, attention_dropout, true, /*batch_first=*/true));
  dropout = register_module("dropout", std::make_shared<nn::Dropout>(dropout_p));
  ln_2 = register_module("ln_2", std::make_shared<nn::LayerNorm>(hidden_dim, 1e-6));
  auto fc1 = std::make_shared<nn::Linear>(hidden_dim, mlp_dim);
  auto fc2 = std::make_shared<nn::Linear>(mlp_dim, hidden_dim);
  mlp = register_module(
      "mlp", std::make_shared<nn::Sequential>(fc1, std::make_shared<nn::GELU>(),
                                              std::make_shared<nn::Dropout>(dropout_p), fc2,
                                              std::make_shared<nn::Dropout>(dropout_p)));
  // torchvision's MLPBlock init.
  for (const auto& fc : {fc1, fc2}) {
    nn::init::xavier_uniform_(fc->weight);
    nn::init::normal_(fc->bias, 0.0, 1e-6);
  }
}

Tensor EncoderBlock::forward(const Tensor& input) {
  KILN_CHECK(input.dim() == 3, "EncoderBlock: expected input (batch, seq, hidden), got {} dims",
             input.dim());
  Tensor normed = ln_1->forward(input);
  Tensor attended = std::get<0>(
      self_attention->forward(normed, normed, normed, Tensor(), /*need_weights=*/false));
  Tensor x = dropout->forward(attended) + input;
  return x + mlp->forward(ln_2->forward(x));
}

ViTEncoder::ViTEncoder(int64_t seq_length, const ViTConfig& config) : nn::Module("Encoder") {
  pos_embedding = register_parameter("pos_embedding", empty({1, seq_length, config.hidden_dim}));
  nn::init::normal_(pos_embedding, 0.0, 0.02);  // from BERT
  dropout = register_module("dropout", std::make_shared<nn::Dropout>(config.dropout));
  nn::OrderedDict<nn::ModulePtr> blocks;
  for (int64_t i = 0; i < config.num_layers; ++i) {
    blocks.insert(
        fmt::format("encoder_layer_{}", i),
        std::make_shared<EncoderBlock>(config.num_heads, config.hidden_dim, config.mlp_dim,
                                       config.dropout, config.attention_dropout));
  }
  layers = register_module("layers", std::make_shared<nn::Sequential>(blocks));
  ln = register_module("ln", std::make_shared<nn::LayerNorm>(config.hidden_dim, 1e-6));
}

Tensor ViTEncoder::forward(const Tensor& input) {
  KILN_CHECK(input.dim() == 3 && input.size(1) == pos_embedding.size(1),
             "Encoder: expected input (batch, {}, hidden), got {} dims", pos_embedding.size(1),
             input.dim());
  return ln->forward(layers->forward(dropout->forward(input + pos_embedding)));
}

VisionTransformer::VisionTransformer(const ViTConfig& config_)
    : nn::Module("VisionTransformer"), config(config_) {
  KILN_CHECK(config.patch_size > 0 && config.image_size % config.patch_size == 0,
             "VisionTransformer: image_size {} is not a multiple of patch_size {}",
             config.image_size, config.patch_size);
  int64_t patches = config.image_size / config.patch_size;
  conv_proj = register_module(
      "conv_proj",
      std::make_shared<nn::Conv2d>(3, config.hidden_dim, config.patch_size, config.patch_size));
  class_token = register_parameter("class_token", zeros({1, 1, config.hidden_dim}));
  encoder = register_module("encoder", std::make_shared<ViTEncoder>(patches * patches + 1, config));
  auto head = std::make_shared<nn::Linear>(config.hidden_dim, config.num_classes);
  nn::OrderedDict<nn::ModulePtr> head_layers;
  head_layers.insert("head", head);
  heads = register_module("heads", std::make_shared<nn::Sequential>(head_layers));

  // torchvision's initialization: conv_proj truncated normal with std sqrt(1 / fan_in), the head
  // at zero.
  double fan_in = 3.0 * static_cast<double>(config.patch_size * config.patch_size);
  nn::init::trunc_normal_(conv_proj->weight, 0.0, std::sqrt(1.0 / fan_in));
  nn::init::zeros_(conv_proj->bias);
  nn::init::zeros_(head->weight);
  nn::init::zeros_(head->bias);
}

Tensor VisionTransformer::forward(const Tensor& input) {
  KILN_CHECK(input.dim() == 4 && input.size(1) == 3 && input.size(2) == config.image_size &&
                 input.size(3) == config.image_size,
             "VisionTransformer: expected input (N, 3, {}, {}), got [{}]", config.image_size,
             config.image_size, fmt::join(input.sizes(), ", "));
  int64_t n = input.size(0);
  // (N, 3, H, W) -> (N, hidden, H/p, W/p) -> (N, patches, hidden).
  Tensor x = conv_proj->forward(input).flatten(2).permute({0, 2, 1});
  x = cat({class_token.expand({n, -1, -1}), x}, 1);
  x = encoder->forward(x);
  return heads->forward(x.select(1, 0));
}

std::shared_ptr<VisionTransformer> vision_transformer(const ViTConfig& config) {
  return std::make_shared<VisionTransformer>(config);
}

std::shared_ptr<VisionTransformer> vit_b_16(int64_t num_classes) {
  ViTConfig config;
  config.num_classes = num_classes;
  return std::make_shared<VisionTransformer>(config);
}

}  // namespace kiln::models
