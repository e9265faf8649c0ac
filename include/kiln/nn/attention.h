#pragma once
// MultiheadAttention (torch.nn.MultiheadAttention) with PyTorch's parameter names: in_proj_weight
// (3E, E), in_proj_bias (3E), out_proj.weight / out_proj.bias. key and value have embed_dim
// features (kdim = vdim = embed_dim).
#include <kiln/nn/linear.h>
#include <kiln/nn/module.h>

#include <tuple>

namespace kiln::nn {

class MultiheadAttention : public Module {
 public:
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, double dropout = 0.0, bool bias = true,
                     bool batch_first = false);
  void reset_parameters();

  // query (L, N, E), key and value (S, N, E) -- (N, L, E) / (N, S, E) when batch_first, or
  // unbatched (L, E) / (S, E).
  //  key_padding_mask (N, S): bool (true = ignore that key) or float (added to the scores).
  //  attn_mask (L, S) or (N * num_heads, L, S): bool (true = may not attend) or float (added).
  //  is_causal with no attn_mask: query i attends keys j <= i.
  // Returns (attn_output like query, attn_weights (N, L, S) averaged over heads, or
  // (N, num_heads, L, S) when !average_attn_weights; undefined when !need_weights).
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = Tensor(),
                                     bool need_weights = true, const Tensor& attn_mask = Tensor(),
                                     bool average_attn_weights = true, bool is_causal = false);
  using Module::forward;

  int64_t embed_dim, num_heads, head_dim;
  double dropout;
  bool batch_first;
  Tensor in_proj_weight, in_proj_bias;
  std::shared_ptr<NonDynamicallyQuantizableLinear> out_proj;
};

}  // namespace kiln::nn
