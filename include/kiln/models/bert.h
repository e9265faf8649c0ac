#pragma once
// BERT (Devlin et al. 2018) with Hugging Face's BertModel structure and parameter names:
// embeddings.{word,position,token_type}_embeddings / embeddings.LayerNorm,
// encoder.layer.N.attention.self.{query,key,value}, .attention.output.{dense,LayerNorm},
// .intermediate.dense, .output.{dense,LayerNorm}, pooler.dense. Post-LN, erf-GELU, eps 1e-12,
// dropout 0.1 in training mode; attention runs through scaled_dot_product_attention. Weights
// start as Hugging Face's (_init_weights: normal(0, initializer_range), zero biases, LayerNorm
// 1/0, the padding row zero) and load from its state dicts by name.
#include <kiln/nn/activation.h>
#include <kiln/nn/container.h>
#include <kiln/nn/dropout.h>
#include <kiln/nn/embedding.h>
#include <kiln/nn/linear.h>
#include <kiln/nn/normalization.h>

#include <memory>
#include <string>

namespace kiln::models {

// Hugging Face's BertConfig fields and defaults (BERT-base).
struct BertConfig {
  int64_t vocab_size = 30522;
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  std::string hidden_act = "gelu";  // "gelu" (erf) or "gelu_new" (tanh approximation)
  double hidden_dropout_prob = 0.1;
  double attention_probs_dropout_prob = 0.1;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  double initializer_range = 0.02;
  double layer_norm_eps = 1e-12;
  int64_t pad_token_id = 0;
  bool add_pooling_layer = true;
  int64_t num_labels = 2;  // for BertForSequenceClassification
};

class BertEmbeddings : public nn::Module {
 public:
  explicit BertEmbeddings(const BertConfig& config);
  // input_ids (B, S) integer; token_type_ids (B, S) or undefined (all type 0). -> (B, S, H).
  Tensor forward(const Tensor& input_ids, const Tensor& token_type_ids);
  Tensor forward(const Tensor& input_ids) override { return forward(input_ids, Tensor()); }

  std::shared_ptr<nn::Embedding> word_embeddings, position_embeddings, token_type_embeddings;
  std::shared_ptr<nn::LayerNorm> LayerNorm;
  std::shared_ptr<nn::Dropout> dropout;
};

// Multi-head self-attention's projections; `mask` is bool (B, 1, 1, S) (true = attend) or
// undefined.
class BertSelfAttention : public nn::Module {
 public:
  explicit BertSelfAttention(const BertConfig& config);
  Tensor forward(const Tensor& hidden_states, const Tensor& mask);
  Tensor forward(const Tensor& hidden_states) override { return forward(hidden_states, Tensor()); }

  int64_t num_attention_heads, attention_head_size;
  std::shared_ptr<nn::Linear> query, key, value;
  std::shared_ptr<nn::Dropout> dropout;  // on the attention probabilities (inside the kernel)
};

// dense -> dropout -> LayerNorm(x + residual); BertSelfOutput and BertOutput alike.
class BertResidualOutput : public nn::Module {
 public:
  BertResidualOutput(std::string type_name, int64_t in_features, const BertConfig& config);
  Tensor forward(const Tensor& hidden_states, const Tensor& residual);
  using nn::Module::forward;

  std::shared_ptr<nn::Linear> dense;
  std::shared_ptr<nn::LayerNorm> LayerNorm;
  std::shared_ptr<nn::Dropout> dropout;
};

class BertAttention : public nn::Module {
 public:
  explicit BertAttention(const BertConfig& config);
  Tensor forward(const Tensor& hidden_states, const Tensor& mask);
  Tensor forward(const Tensor& hidden_states) override { return forward(hidden_states, Tensor()); }

  std::shared_ptr<BertSelfAttention> self;
  std::shared_ptr<BertResidualOutput> output;
};

class BertIntermediate : public nn::Module {
 public:
  explicit BertIntermediate(const BertConfig& config);
  Tensor forward(const Tensor& hidden_states) override;

  std::shared_ptr<nn::Linear> dense;
  std::shared_ptr<nn::GELU> intermediate_act_fn;
};

class BertLayer : public nn::Module {
 public:
  explicit BertLayer(const BertConfig& config);
  Tensor forward(const Tensor& hidden_states, const Tensor& mask);
  Tensor forward(const Tensor& hidden_states) override { return forward(hidden_states, Tensor()); }

  std::shared_ptr<BertAttention> attention;
  std::shared_ptr<BertIntermediate> intermediate;
  std::shared_ptr<BertResidualOutput> output;
};

class BertPooler : public nn::Module {
 public:
  explicit BertPooler(const BertConfig& config);
  // tanh(dense(hidden_states[:, 0])).
  Tensor forward(const Tensor& hidden_states) override;

  std::shared_ptr<nn::Linear> dense;
  std::shared_ptr<nn::Tanh> activation;
};

struct BertModelOutput {
  Tensor last_hidden_state;  // (B, S, H)
  Tensor pooler_output;      // (B, H); undefined without a pooling layer
};

class BertModel : public nn::Module {
 public:
  explicit BertModel(const BertConfig& config);
  // input_ids (B, S); attention_mask (B, S), nonzero where a token may be attended to, or
  // undefined (attend everywhere); token_type_ids (B, S) or undefined (all 0).
  BertModelOutput forward(const Tensor& input_ids, const Tensor& attention_mask,
                          const Tensor& token_type_ids = Tensor());
  // last_hidden_state for input_ids alone.
  Tensor forward(const Tensor& input_ids) override {
    return forward(input_ids, Tensor()).last_hidden_state;
  }

  BertConfig config;
  std::shared_ptr<BertEmbeddings> embeddings;
  std::shared_ptr<nn::Module> encoder;  // holds `layer`, a ModuleList of BertLayer
  std::shared_ptr<nn::ModuleList> layer;
  std::shared_ptr<BertPooler> pooler;  // null without a pooling layer
};

// BertModel with dropout and a linear classifier on the pooled output (Hugging Face's
// BertForSequenceClassification: parameters bert.*, classifier.*).
class BertForSequenceClassification : public nn::Module {
 public:
  explicit BertForSequenceClassification(const BertConfig& config);
  // Logits (B, num_labels).
  Tensor forward(const Tensor& input_ids, const Tensor& attention_mask,
                 const Tensor& token_type_ids = Tensor());
  Tensor forward(const Tensor& input_ids) override { return forward(input_ids, Tensor()); }
  // Hugging Face's loss: cross-entropy over integer labels (B,) for num_labels > 1, MSE against
  // float labels for num_labels == 1 (regression).
  Tensor loss(const Tensor& logits, const Tensor& labels) const;

  int64_t num_labels;
  std::shared_ptr<BertModel> bert;
  std::shared_ptr<nn::Dropout> dropout;
  std::shared_ptr<nn::Linear> classifier;
};

std::shared_ptr<BertModel> bert(const BertConfig& config = {});
std::shared_ptr<BertForSequenceClassification> bert_for_sequence_classification(
    const BertConfig& config = {});

}  // namespace kiln::models
