#include "models/hf_init.h"

#include <kiln/core/error.h>
#include <kiln/models/bert.h>
#include <kiln/nn/functional.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/sym_size_ops.h>

namespace kiln::models {

namespace {

std::string gelu_approximate(const std::string& hidden_act) {
  KILN_CHECK(hidden_act == "gelu" || hidden_act == "gelu_new",
             "BertConfig: hidden_act must be \"gelu\" or \"gelu_new\", got \"{}\"", hidden_act);
  return hidden_act == "gelu" ? "none" : "tanh";
}

}  // namespace

BertEmbeddings::BertEmbeddings(const BertConfig& config) : nn::Module("BertEmbeddings") {
  word_embeddings = register_module(
      "word_embeddings",
      std::make_shared<nn::Embedding>(config.vocab_size, config.hidden_size, config.pad_token_id));
  position_embeddings = register_module(
      "position_embeddings",
      std::make_shared<nn::Embedding>(config.max_position_embeddings, config.hidden_size));
  token_type_embeddings =
      register_module("token_type_embeddings",
                      std::make_shared<nn::Embedding>(config.type_vocab_size, config.hidden_size));
  LayerNorm = register_module(
      "LayerNorm", std::make_shared<nn::LayerNorm>(config.hidden_size, config.layer_norm_eps));
  dropout = register_module("dropout", std::make_shared<nn::Dropout>(config.hidden_dropout_prob));
}

Tensor BertEmbeddings::forward(const Tensor& input_ids, const Tensor& token_type_ids) {
  KILN_CHECK(input_ids.dim() == 2, "BertEmbeddings: expected input_ids (batch, seq), got {} dims",
             input_ids.dim());
  // Symbolic under a dynamic trace: the check then guards the sequence length.
  const SymInt seq = input_ids.sym_size(1);
  KILN_CHECK(seq <= position_embeddings->num_embeddings,
             "BertEmbeddings: sequence length {} exceeds max_position_embeddings {}", seq.str(),
             position_embeddings->num_embeddings);
  // The embeddings of positions 0..seq-1 are the table's first rows (Hugging Face's
  // position_ids buffer sliced to seq, looked up), read as a slice so that seq may be symbolic.
  Tensor positions = narrow_symint(position_embeddings->weight, 0, 0, seq).unsqueeze(0);
  Tensor types = token_type_ids.defined() ? token_type_ids
                                          : zeros_like(input_ids, TensorOptions(DType::Int64));
  Tensor x =
      word_embeddings->forward(input_ids) + token_type_embeddings->forward(types) + positions;
  return dropout->forward(LayerNorm->forward(x));
}

BertSelfAttention::BertSelfAttention(const BertConfig& config)
    : nn::Module("BertSelfAttention"), num_attention_heads(config.num_attention_heads) {
  KILN_CHECK(config.num_attention_heads > 0 && config.hidden_size % config.num_attention_heads == 0,
             "BertSelfAttention: hidden_size {} is not a multiple of num_attention_heads {}",
             config.hidden_size, config.num_attention_heads);
  attention_head_size = config.hidden_size / config.num_attention_heads;
  int64_t h = config.hidden_size;
  query = register_module("query", std::make_shared<nn::Linear>(h, h));
  key = register_module("key", std::make_shared<nn::Linear>(h, h));
  value = register_module("value", std::make_shared<nn::Linear>(h, h));
  dropout = register_module("dropout",
                            std::make_shared<nn::Dropout>(config.attention_probs_dropout_prob));
}

Tensor BertSelfAttention::forward(const Tensor& hidden_states, const Tensor& mask) {
  const SymInt batch = hidden_states.sym_size(0), seq = hidden_states.sym_size(1);
  auto heads = [&](const Tensor& t) {  // (B, S, H) -> (B, heads, S, head_size)
    return view_symint(t, {batch, seq, num_attention_heads, attention_head_size}).transpose(1, 2);
  };
  Tensor context = scaled_dot_product_attention(
      heads(query->forward(hidden_states)), heads(key->forward(hidden_states)),
      heads(value->forward(hidden_states)), mask, is_training() ? dropout->p : 0.0);
  return reshape_symint(context.transpose(1, 2),
                        {batch, seq, num_attention_heads * attention_head_size});
}

BertResidualOutput::BertResidualOutput(std::string type_name, int64_t in_features,
                                       const BertConfig& config)
    : nn::Module(std::move(type_name)) {
  dense = register_module("dense", std::make_shared<nn::Linear>(in_features, config.hidden_size));
  LayerNorm = register_module(
      "LayerNorm", std::make_shared<nn::LayerNorm>(config.hidden_size, config.layer_norm_eps));
  dropout = register_module("dropout", std::make_shared<nn::Dropout>(config.hidden_dropout_prob));
}

Tensor BertResidualOutput::forward(const Tensor& hidden_states, const Tensor& residual) {
  return LayerNorm->forward(dropout->forward(dense->forward(hidden_states)) + residual);
}

BertAttention::BertAttention(const BertConfig& config) : nn::Module("BertAttention") {
  self = register_module("self", std::make_shared<BertSelfAttention>(config));
  output = register_module(
      "output", std::make_shared<BertResidualOutput>("BertSelfOutput", config.hidden_size, config));
}

Tensor BertAttention::forward(const Tensor& hidden_states, const Tensor& mask) {
  return output->forward(self->forward(hidden_states, mask), hidden_states);
}

BertIntermediate::BertIntermediate(const BertConfig& config) : nn::Module("BertIntermediate") {
  dense = register_module(
      "dense", std::make_shared<nn::Linear>(config.hidden_size, config.intermediate_size));
  intermediate_act_fn = register_module(
      "intermediate_act_fn", std::make_shared<nn::GELU>(gelu_approximate(config.hidden_act)));
}

Tensor BertIntermediate::forward(const Tensor& hidden_states) {
  return intermediate_act_fn->forward(dense->forward(hidden_states));
}

BertLayer::BertLayer(const BertConfig& config) : nn::Module("BertLayer") {
  attention = register_module("attention", std::make_shared<BertAttention>(config));
  intermediate = register_module("intermediate", std::make_shared<BertIntermediate>(config));
  output = register_module("output", std::make_shared<BertResidualOutput>(
                                         "BertOutput", config.intermediate_size, config));
}

Tensor BertLayer::forward(const Tensor& hidden_states, const Tensor& mask) {
  Tensor attended = attention->forward(hidden_states, mask);
  return output->forward(intermediate->forward(attended), attended);
}

BertPooler::BertPooler(const BertConfig& config) : nn::Module("BertPooler") {
  dense = register_module("dense",
                          std::make_shared<nn::Linear>(config.hidden_size, config.hidden_size));
  activation = register_module("activation", std::make_shared<nn::Tanh>());
}

Tensor BertPooler::forward(const Tensor& hidden_states) {
  return activation->forward(dense->forward(hidden_states.select(1, 0)));
}

BertModel::BertModel(const BertConfig& config_) : nn::Module("BertModel"), config(config_) {
  gelu_approximate(config.hidden_act);  // validates it
  embeddings = register_module("embeddings", std::make_shared<BertEmbeddings>(config));
  encoder = register_module("encoder", std::make_shared<nn::Module>("BertEncoder"));
  layer = encoder->register_module("layer", std::make_shared<nn::ModuleList>());
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    layer->push_back(std::make_shared<BertLayer>(config));
  }
  if (config.add_pooling_layer)
    pooler = register_module("pooler", std::make_shared<BertPooler>(config));
  detail::hf_init_weights(*this, config.initializer_range);
}

BertModelOutput BertModel::forward(const Tensor& input_ids, const Tensor& attention_mask,
                                   const Tensor& token_type_ids) {
  KILN_CHECK(!attention_mask.defined() || attention_mask.sym_sizes() == input_ids.sym_sizes(),
             "BertModel: attention_mask must have input_ids' shape (batch, seq)");
  KILN_CHECK(!token_type_ids.defined() || token_type_ids.sym_sizes() == input_ids.sym_sizes(),
             "BertModel: token_type_ids must have input_ids' shape (batch, seq)");
  // (B, S) -> bool (B, 1, 1, S): every query may attend to the unpadded keys.
  Tensor mask;
  if (attention_mask.defined()) mask = attention_mask.ne(0).unsqueeze(1).unsqueeze(1);
  Tensor x = embeddings->forward(input_ids, token_type_ids);
  for (const auto& m : *layer) x = std::static_pointer_cast<BertLayer>(m)->forward(x, mask);
  BertModelOutput out;
  out.last_hidden_state = x;
  if (pooler) out.pooler_output = pooler->forward(x);
  return out;
}

BertForSequenceClassification::BertForSequenceClassification(const BertConfig& config)
    : nn::Module("BertForSequenceClassification"), num_labels(config.num_labels) {
  KILN_CHECK(config.num_labels > 0,
             "BertForSequenceClassification: num_labels must be positive, got {}",
             config.num_labels);
  BertConfig with_pooler = config;
  with_pooler.add_pooling_layer = true;
  bert = register_module("bert", std::make_shared<BertModel>(with_pooler));
  dropout = register_module("dropout", std::make_shared<nn::Dropout>(config.hidden_dropout_prob));
  classifier = register_module("classifier",
                               std::make_shared<nn::Linear>(config.hidden_size, config.num_labels));
  detail::hf_init_weights(*classifier, config.initializer_range);
}

Tensor BertForSequenceClassification::forward(const Tensor& input_ids, const Tensor& attention_mask,
                                              const Tensor& token_type_ids) {
  Tensor pooled = bert->forward(input_ids, attention_mask, token_type_ids).pooler_output;
  return classifier->forward(dropout->forward(pooled));
}

Tensor BertForSequenceClassification::loss(const Tensor& logits, const Tensor& labels) const {
  if (num_labels == 1) return mse_loss(logits.squeeze(-1), labels.to(logits.dtype()));
  return cross_entropy(logits.view({-1, num_labels}), labels.view({-1}));
}

std::shared_ptr<BertModel> bert(const BertConfig& config) {
  return std::make_shared<BertModel>(config);
}

std::shared_ptr<BertForSequenceClassification> bert_for_sequence_classification(
    const BertConfig& config) {
  return std::make_shared<BertForSequenceClassification>(config);
}

}  // namespace kiln::models
