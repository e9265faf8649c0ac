#include <kiln/nn/functional.h>
#include <kiln/nn/transformer.h>

namespace kiln::nn {

TransformerEncoderLayer::TransformerEncoderLayer(int64_t d_model, int64_t nhead,
                                                 int64_t dim_feedforward, double dropout_p,
                                                 std::string activation_, double layer_norm_eps,
                                                 bool batch_first, bool norm_first_, bool bias)
    : Module("TransformerEncoderLayer"),
      activation(std::move(activation_)),
      norm_first(norm_first_) {
  KILN_CHECK(activation == "relu" || activation == "gelu",
             "TransformerEncoderLayer: activation should be relu/gelu, not {}", activation);
  self_attn = register_module("self_attn", std::make_shared<MultiheadAttention>(
                                               d_model, nhead, dropout_p, bias, batch_first));
  linear1 = register_module("linear1", std::make_shared<Linear>(d_model, dim_feedforward, bias));
  dropout = register_module("dropout", std::make_shared<Dropout>(dropout_p));
  linear2 = register_module("linear2", std::make_shared<Linear>(dim_feedforward, d_model, bias));
  norm1 =
      register_module("norm1", std::make_shared<LayerNorm>(d_model, layer_norm_eps, true, bias));
  norm2 =
      register_module("norm2", std::make_shared<LayerNorm>(d_model, layer_norm_eps, true, bias));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(dropout_p));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(dropout_p));
}

Tensor TransformerEncoderLayer::self_attention_block(const Tensor& x, const Tensor& mask,
                                                     const Tensor& padding_mask, bool is_causal) {
  Tensor out = std::get<0>(
      self_attn->forward(x, x, x, padding_mask, /*need_weights=*/false, mask, true, is_causal));
  return (*dropout1)(out);
}

Tensor TransformerEncoderLayer::feed_forward_block(const Tensor& x) {
  Tensor h = (*linear1)(x);
  h = activation == "gelu" ? functional::gelu(h) : functional::relu(h);
  return (*dropout2)((*linear2)((*dropout)(h)));
}

Tensor TransformerEncoderLayer::forward(const Tensor& src, const Tensor& src_mask,
                                        const Tensor& src_key_padding_mask, bool is_causal) {
  Tensor x = src;
  if (norm_first) {
    x = x + self_attention_block((*norm1)(x), src_mask, src_key_padding_mask, is_causal);
    x = x + feed_forward_block((*norm2)(x));
  } else {
    x = (*norm1)(x + self_attention_block(x, src_mask, src_key_padding_mask, is_causal));
    x = (*norm2)(x + feed_forward_block(x));
  }
  return x;
}

}  // namespace kiln::nn
