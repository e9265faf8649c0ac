#pragma once
// Embedding: a lookup table of num_embeddings rows of size embedding_dim (torch.nn.Embedding).
// Weights start N(0, 1); the padding_idx row starts at zero and receives no gradient.
#include <kiln/nn/module.h>

#include <optional>

namespace kiln::nn {

class Embedding : public Module {
 public:
  // padding_idx may be negative (counts from the end); it is stored non-negative, as PyTorch.
  Embedding(int64_t num_embeddings, int64_t embedding_dim,
            std::optional<int64_t> padding_idx = std::nullopt);
  // A table holding a copy of `embeddings` (2-D); freeze: the weight does not require grad.
  static std::shared_ptr<Embedding> from_pretrained(
      const Tensor& embeddings, bool freeze = true,
      std::optional<int64_t> padding_idx = std::nullopt);
  void reset_parameters();
  // input: integer indices of any shape; output input.shape + (embedding_dim,).
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  int64_t num_embeddings, embedding_dim;
  std::optional<int64_t> padding_idx;
  Tensor weight;
};

}  // namespace kiln::nn
