#include "models/hf_init.h"

#include <kiln/autograd/grad_mode.h>
#include <kiln/core/error.h>
#include <kiln/models/gpt2.h>
#include <kiln/nn/functional.h>
#include <kiln/nn/init.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/sym_size_ops.h>

#include <cmath>

#include <fmt/format.h>

namespace kiln::models {

Conv1D::Conv1D(int64_t nf_, int64_t nx_) : nn::Module("Conv1D"), nf(nf_), nx(nx_) {
  KILN_CHECK(nf > 0 && nx > 0, "Conv1D: nf ({}) and nx ({}) must be positive", nf, nx);
  weight = register_parameter("weight", empty({nx, nf}));
  bias = register_parameter("bias", zeros({nf}));
  nn::init::normal_(weight, 0.0, 0.02);
}

Tensor Conv1D::forward(const Tensor& input) {
  KILN_CHECK(input.dim() >= 1 && input.sym_size(-1) == nx,
             "Conv1D: expected input (..., {}), got last dim {}", nx,
             input.dim() >= 1 ? input.sym_size(-1).str() : "none");
  SymDimVector out_shape(input.sym_sizes().begin(), input.sym_sizes().end());
  out_shape.back() = nf;
  return view_symint(addmm(bias, input.reshape({-1, nx}), weight), out_shape);
}

std::string Conv1D::extra_repr() const { return fmt::format("nf={}, nx={}", nf, nx); }

GPT2Attention::GPT2Attention(const GPT2Config& config)
    : nn::Module("GPT2Attention"), num_heads(config.n_head) {
  KILN_CHECK(config.n_head > 0 && config.n_embd % config.n_head == 0,
             "GPT2Attention: n_embd {} is not a multiple of n_head {}", config.n_embd,
             config.n_head);
  head_dim = config.n_embd / config.n_head;
  c_attn = register_module("c_attn", std::make_shared<Conv1D>(3 * config.n_embd, config.n_embd));
  c_proj = register_module("c_proj", std::make_shared<Conv1D>(config.n_embd, config.n_embd));
  attn_dropout = register_module("attn_dropout", std::make_shared<nn::Dropout>(config.attn_pdrop));
  resid_dropout =
      register_module("resid_dropout", std::make_shared<nn::Dropout>(config.resid_pdrop));
}

Tensor GPT2Attention::forward(const Tensor& hidden_states, const Tensor& mask) {
  const SymInt batch = hidden_states.sym_size(0), seq = hidden_states.sym_size(1);
  int64_t embd = num_heads * head_dim;
  auto qkv = c_attn->forward(hidden_states).split(embd, 2);
  auto heads = [&](const Tensor& t) {  // (B, S, E) -> (B, heads, S, head_dim)
    return view_symint(t, {batch, seq, num_heads, head_dim}).transpose(1, 2);
  };
  double p = is_training() ? attn_dropout->p : 0.0;
  Tensor context =
      mask.defined()
          ? scaled_dot_product_attention(heads(qkv[0]), heads(qkv[1]), heads(qkv[2]), mask, p)
          : scaled_dot_product_attention(heads(qkv[0]), heads(qkv[1]), heads(qkv[2]), Tensor(), p,
                                         /*is_causal=*/true);
  context = reshape_symint(context.transpose(1, 2), {batch, seq, embd});
  return resid_dropout->forward(c_proj->forward(context));
}

GPT2MLP::GPT2MLP(const GPT2Config& config) : nn::Module("GPT2MLP") {
  int64_t inner = config.n_inner.value_or(4 * config.n_embd);
  c_fc = register_module("c_fc", std::make_shared<Conv1D>(inner, config.n_embd));
  c_proj = register_module("c_proj", std::make_shared<Conv1D>(config.n_embd, inner));
  act = register_module("act", std::make_shared<nn::GELU>("tanh"));  // Hugging Face's gelu_new
  dropout = register_module("dropout", std::make_shared<nn::Dropout>(config.resid_pdrop));
}

Tensor GPT2MLP::forward(const Tensor& hidden_states) {
  return dropout->forward(c_proj->forward(act->forward(c_fc->forward(hidden_states))));
}

GPT2Block::GPT2Block(const GPT2Config& config) : nn::Module("GPT2Block") {
  ln_1 = register_module("ln_1",
                         std::make_shared<nn::LayerNorm>(config.n_embd, config.layer_norm_epsilon));
  attn = register_module("attn", std::make_shared<GPT2Attention>(config));
  ln_2 = register_module("ln_2",
                         std::make_shared<nn::LayerNorm>(config.n_embd, config.layer_norm_epsilon));
  mlp = register_module("mlp", std::make_shared<GPT2MLP>(config));
}

Tensor GPT2Block::forward(const Tensor& hidden_states, const Tensor& mask) {
  Tensor x = hidden_states + attn->forward(ln_1->forward(hidden_states), mask);
  return x + mlp->forward(ln_2->forward(x));
}

GPT2Model::GPT2Model(const GPT2Config& config) : nn::Module("GPT2Model") {
  wte = register_module("wte", std::make_shared<nn::Embedding>(config.vocab_size, config.n_embd));
  wpe = register_module("wpe", std::make_shared<nn::Embedding>(config.n_positions, config.n_embd));
  drop = register_module("drop", std::make_shared<nn::Dropout>(config.embd_pdrop));
  h = register_module("h", std::make_shared<nn::ModuleList>());
  for (int64_t i = 0; i < config.n_layer; ++i) h->push_back(std::make_shared<GPT2Block>(config));
  ln_f = register_module("ln_f",
                         std::make_shared<nn::LayerNorm>(config.n_embd, config.layer_norm_epsilon));
}

Tensor GPT2Model::forward(const Tensor& input_ids, const Tensor& attention_mask) {
  KILN_CHECK(input_ids.dim() == 2, "GPT2Model: expected input_ids (batch, seq), got {} dims",
             input_ids.dim());
  // Symbolic under a dynamic trace: the check then guards the sequence length.
  const SymInt seq = input_ids.sym_size(1);
  KILN_CHECK(seq <= wpe->num_embeddings, "GPT2Model: sequence length {} exceeds n_positions {}",
             seq.str(), wpe->num_embeddings);
  Tensor mask;
  if (attention_mask.defined()) {
    KILN_CHECK(attention_mask.sym_sizes() == input_ids.sym_sizes(),
               "GPT2Model: attention_mask must have input_ids' shape (batch, seq)");
    // Causality and padding in one bool mask (B, 1, S, S): query i attends key j <= i if unpadded.
    Tensor causal = full_symint({seq, seq}, true, TensorOptions(DType::Bool)).tril();
    mask = attention_mask.ne(0).unsqueeze(1).unsqueeze(1).logical_and(causal);
  }
  // Positions 0..seq-1 embed as the table's first rows, read as a slice so seq may be symbolic.
  Tensor positions = narrow_symint(wpe->weight, 0, 0, seq).unsqueeze(0);
  Tensor x = drop->forward(wte->forward(input_ids) + positions);
  for (const auto& m : *h) x = std::static_pointer_cast<GPT2Block>(m)->forward(x, mask);
  return ln_f->forward(x);
}

GPT2LMHeadModel::GPT2LMHeadModel(const GPT2Config& config_)
    : nn::Module("GPT2LMHeadModel"), config(config_) {
  transformer = register_module("transformer", std::make_shared<GPT2Model>(config));
  lm_head = register_module("lm_head",
                            std::make_shared<nn::Linear>(config.n_embd, config.vocab_size, false));
  detail::hf_init_weights(*this, config.initializer_range);
  {
    // Hugging Face scales the residual projections by 1 / sqrt(2 n_layer) (GPT-2 paper, 2.3).
    autograd::NoGradGuard no_grad;
    double std = config.initializer_range / std::sqrt(2.0 * static_cast<double>(config.n_layer));
    auto params = named_parameters();
    for (const auto& [name, p] : params.items()) {
      if (name.ends_with("c_proj.weight")) nn::init::normal_(p, 0.0, std);
    }
  }
  // Tie the output projection to the token embedding: one tensor under both names.
  lm_head->weight = lm_head->register_parameter("weight", transformer->wte->weight);
}

Tensor GPT2LMHeadModel::forward(const Tensor& input_ids, const Tensor& attention_mask) {
  return lm_head->forward(transformer->forward(input_ids, attention_mask));
}

std::shared_ptr<GPT2LMHeadModel> gpt2(const GPT2Config& config) {
  return std::make_shared<GPT2LMHeadModel>(config);
}

}  // namespace kiln::models
