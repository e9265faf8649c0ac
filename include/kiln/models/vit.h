#pragma once
// Vision Transformer (Dosovitskiy et al. 2020) with torchvision's VisionTransformer structure and
// parameter names: conv_proj, class_token, encoder.pos_embedding,
// encoder.layers.encoder_layer_N.{ln_1, self_attention (nn::MultiheadAttention), ln_2, mlp.0,
// mlp.3}, encoder.ln, heads.head. Pre-LN (eps 1e-6), erf-GELU; attention runs through
// scaled_dot_product_attention. Weights start as torchvision's and load from its state dicts.
#include <kiln/nn/activation.h>
#include <kiln/nn/attention.h>
#include <kiln/nn/container.h>
#include <kiln/nn/conv.h>
#include <kiln/nn/dropout.h>
#include <kiln/nn/linear.h>
#include <kiln/nn/normalization.h>

#include <memory>

namespace kiln::models {

// torchvision's VisionTransformer arguments (ViT-B/16 by default).
struct ViTConfig {
  int64_t image_size = 224;
  int64_t patch_size = 16;
  int64_t num_layers = 12;
  int64_t num_heads = 12;
  int64_t hidden_dim = 768;
  int64_t mlp_dim = 3072;
  double dropout = 0.0;
  double attention_dropout = 0.0;
  int64_t num_classes = 1000;
};

// x + attention(ln_1(x)), then + mlp(ln_2(.)); mlp is Sequential(Linear, GELU, Dropout, Linear,
// Dropout) as torchvision's MLPBlock.
class EncoderBlock : public nn::Module {
 public:
  EncoderBlock(int64_t num_heads, int64_t hidden_dim, int64_t mlp_dim, double dropout,
               double attention_dropout);
  Tensor forward(const Tensor& input) override;

  std::shared_ptr<nn::LayerNorm> ln_1, ln_2;
  std::shared_ptr<nn::MultiheadAttention> self_attention;  // batch_first
  std::shared_ptr<nn::Dropout> dropout;
  std::shared_ptr<nn::Sequential> mlp;
};

// Adds pos_embedding (1, seq_length, hidden_dim), runs the blocks, then ln.
class ViTEncoder : public nn::Module {
 public:
  ViTEncoder(int64_t seq_length, const ViTConfig& config);
  Tensor forward(const Tensor& input) override;

  Tensor pos_embedding;
  std::shared_ptr<nn::Dropout> dropout;
  std::shared_ptr<nn::Sequential> layers;  // encoder_layer_0, encoder_layer_1, ...
  std::shared_ptr<nn::LayerNorm> ln;
};

// Input (N, 3, image_size, image_size) -> logits (N, num_classes).
class VisionTransformer : public nn::Module {
 public:
  explicit VisionTransformer(const ViTConfig& config);
  Tensor forward(const Tensor& input) override;

  ViTConfig config;
  Tensor class_token;  // (1, 1, hidden_dim)
  std::shared_ptr<nn::Conv2d> conv_proj;
  std::shared_ptr<ViTEncoder> encoder;
  std::shared_ptr<nn::Sequential> heads;  // heads.head
};

std::shared_ptr<VisionTransformer> vision_transformer(const ViTConfig& config);
std::shared_ptr<VisionTransformer> vit_b_16(int64_t num_classes = 1000);

}  // namespace kiln::models
