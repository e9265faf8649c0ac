#pragma once
// GPT-2 (Radford et al. 2019) with Hugging Face's GPT2LMHeadModel structure and parameter names:
// transformer.{wte, wpe, h.N.{ln_1, attn.{c_attn, c_proj}, ln_2, mlp.{c_fc, c_proj}}, ln_f} and
// lm_head, whose weight is wte's (tied: one tensor under both names). Projections are Hugging
// Face's Conv1D, weight (in, out) and y = x @ W + b; pre-LN, tanh-GELU, causal attention through
// scaled_dot_product_attention; dropout 0.1 in training mode. Weights start as Hugging Face's
// (normal(0, 0.02), zero biases, LayerNorm 1/0, c_proj weights normal(0, 0.02 / sqrt(2 n_layer)))
// and load from its state dicts by name.
#include <kiln/nn/activation.h>
#include <kiln/nn/container.h>
#include <kiln/nn/dropout.h>
#include <kiln/nn/embedding.h>
#include <kiln/nn/linear.h>
#include <kiln/nn/normalization.h>

#include <memory>
#include <optional>

namespace kiln::models {

// Hugging Face's GPT2Config fields and defaults (GPT-2 small).
struct GPT2Config {
  int64_t vocab_size = 50257;
  int64_t n_positions = 1024;
  int64_t n_embd = 768;
  int64_t n_layer = 12;
  int64_t n_head = 12;
  std::optional<int64_t> n_inner = std::nullopt;  // the MLP's width; 4 * n_embd when absent
  double resid_pdrop = 0.1;
  double embd_pdrop = 0.1;
  double attn_pdrop = 0.1;
  double layer_norm_epsilon = 1e-5;
  double initializer_range = 0.02;
};

// Hugging Face's Conv1D: a linear layer with the weight transposed, (nx, nf); y = x @ W + b.
class Conv1D : public nn::Module {
 public:
  // nf: output features; nx: input features (Hugging Face's argument order).
  Conv1D(int64_t nf, int64_t nx);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  int64_t nf, nx;
  Tensor weight, bias;
};

class GPT2Attention : public nn::Module {
 public:
  explicit GPT2Attention(const GPT2Config& config);
  // mask: bool (B, 1, S, S) or (B, 1, 1, S) combined with causality, or undefined (causal only).
  Tensor forward(const Tensor& hidden_states, const Tensor& mask);
  Tensor forward(const Tensor& hidden_states) override { return forward(hidden_states, Tensor()); }

  int64_t num_heads, head_dim;
  std::shared_ptr<Conv1D> c_attn, c_proj;
  std::shared_ptr<nn::Dropout> attn_dropout, resid_dropout;
};

class GPT2MLP : public nn::Module {
 public:
  explicit GPT2MLP(const GPT2Config& config);
  Tensor forward(const Tensor& hidden_states) override;

  std::shared_ptr<Conv1D> c_fc, c_proj;
  std::shared_ptr<nn::GELU> act;
  std::shared_ptr<nn::Dropout> dropout;
};

class GPT2Block : public nn::Module {
 public:
  explicit GPT2Block(const GPT2Config& config);
  Tensor forward(const Tensor& hidden_states, const Tensor& mask);
  Tensor forward(const Tensor& hidden_states) override { return forward(hidden_states, Tensor()); }

  std::shared_ptr<nn::LayerNorm> ln_1, ln_2;
  std::shared_ptr<GPT2Attention> attn;
  std::shared_ptr<GPT2MLP> mlp;
};

// The transformer trunk: input_ids (B, S) -> hidden states (B, S, n_embd) after ln_f.
class GPT2Model : public nn::Module {
 public:
  explicit GPT2Model(const GPT2Config& config);
  // attention_mask (B, S), nonzero where a token may be attended to, or undefined.
  Tensor forward(const Tensor& input_ids, const Tensor& attention_mask);
  Tensor forward(const Tensor& input_ids) override { return forward(input_ids, Tensor()); }

  std::shared_ptr<nn::Embedding> wte, wpe;
  std::shared_ptr<nn::Dropout> drop;
  std::shared_ptr<nn::ModuleList> h;
  std::shared_ptr<nn::LayerNorm> ln_f;
};

class GPT2LMHeadModel : public nn::Module {
 public:
  explicit GPT2LMHeadModel(const GPT2Config& config);
  // Logits (B, S, vocab_size).
  Tensor forward(const Tensor& input_ids, const Tensor& attention_mask);
  Tensor forward(const Tensor& input_ids) override { return forward(input_ids, Tensor()); }

  GPT2Config config;
  std::shared_ptr<GPT2Model> transformer;
  std::shared_ptr<nn::Linear> lm_head;  // weight is transformer->wte->weight
};

std::shared_ptr<GPT2LMHeadModel> gpt2(const GPT2Config& config = {});

}  // namespace kiln::models
