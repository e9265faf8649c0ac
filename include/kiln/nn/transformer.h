#pragma once
// TransformerEncoderLayer (torch.nn.TransformerEncoderLayer): self-attention and a feed-forward
// block, each with dropout, a residual connection and LayerNorm -- after the block (post-norm,
// the default) or before it (norm_first). Submodule names as PyTorch: self_attn, linear1,
// dropout, linear2, norm1, norm2, dropout1, dropout2.
#include <kiln/nn/attention.h>
#include <kiln/nn/dropout.h>
#include <kiln/nn/linear.h>
#include <kiln/nn/normalization.h>

#include <string>

namespace kiln::nn {

class TransformerEncoderLayer : public Module {
 public:
  // activation: "relu" or "gelu".
  TransformerEncoderLayer(int64_t d_model, int64_t nhead, int64_t dim_feedforward = 2048,
                          double dropout = 0.1, std::string activation = "relu",
                          double layer_norm_eps = 1e-5, bool batch_first = false,
                          bool norm_first = false, bool bias = true);

  // src (S, N, E), or (N, S, E) when batch_first, or unbatched (S, E); masks as
  // MultiheadAttention's attn_mask and key_padding_mask.
  Tensor forward(const Tensor& src, const Tensor& src_mask,
                 const Tensor& src_key_padding_mask = Tensor(), bool is_causal = false);
  Tensor forward(const Tensor& src) override { return forward(src, Tensor()); }

  std::string activation;
  bool norm_first;
  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<Linear> linear1;
  std::shared_ptr<Dropout> dropout;
  std::shared_ptr<Linear> linear2;
  std::shared_ptr<LayerNorm> norm1, norm2;
  std::shared_ptr<Dropout> dropout1, dropout2;

 private:
  Tensor self_attention_block(const Tensor& x, const Tensor& mask, const Tensor& padding_mask,
                              bool is_causal);
  Tensor feed_forward_block(const Tensor& x);
};

}  // namespace kiln::nn
