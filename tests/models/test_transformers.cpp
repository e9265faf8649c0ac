// BERT, GPT-2 and ViT against Hugging Face's BertModel / BertForSequenceClassification /
// GPT2LMHeadModel and torchvision's VisionTransformer (reference data from
// tests/models/export_reference.py, which uses the same small configs as below).
#include "models/reference_check.h"

#include <kiln/models/models.h>

namespace kiln {
namespace {

using models_testing::expect_gradients_match;
using models_testing::matches_reference;
using models_testing::ReferenceData;
using models_testing::weighted_sum;

models::BertConfig small_bert() {
  models::BertConfig c;
  c.vocab_size = 100;
  c.hidden_size = 64;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.intermediate_size = 128;
  c.max_position_embeddings = 32;
  return c;
}

models::GPT2Config small_gpt2() {
  models::GPT2Config c;
  c.vocab_size = 100;
  c.n_embd = 64;
  c.n_layer = 2;
  c.n_head = 4;
  c.n_positions = 32;
  return c;
}

models::ViTConfig small_vit() {
  models::ViTConfig c;
  c.image_size = 32;
  c.patch_size = 16;
  c.num_layers = 2;
  c.num_heads = 4;
  c.hidden_dim = 64;
  c.mlp_dim = 128;
  c.num_classes = 10;
  return c;
}

TEST(ModelsBert, HuggingFaceNamesAndInit) {
  auto model = models::bert(small_bert());
  auto sd = model->state_dict();
  // len(BertModel(config).state_dict()) for the small config (position_ids and token_type_ids
  // are non-persistent buffers there).
  EXPECT_EQ(sd.size(), 5u + 2 * 16 + 2);
  for (const char* key : {"embeddings.word_embeddings.weight", "embeddings.LayerNorm.bias",
                          "encoder.layer.1.attention.self.value.weight",
                          "encoder.layer.0.attention.output.LayerNorm.weight",
                          "encoder.layer.1.intermediate.dense.bias",
                          "encoder.layer.1.output.dense.weight", "pooler.dense.weight"}) {
    EXPECT_TRUE(sd.contains(key)) << key;
  }
  // normal(0, 0.02) weights, zero biases, padding row (pad_token_id 0) zero.
  Tensor w = model->embeddings->word_embeddings->weight;
  EXPECT_EQ(w.select(0, 0).abs().sum().item<double>(), 0.0);
  EXPECT_NEAR(w.slice(0, 1).std().item<double>(), 0.02, 0.002);
  EXPECT_EQ(sd["encoder.layer.0.attention.self.query.bias"].abs().sum().item<double>(), 0.0);
  EXPECT_EQ(sd["encoder.layer.0.output.LayerNorm.weight"].sum().item<double>(), 64.0);
}

TEST(ModelsBert, ShapesAndBadInput) {
  auto model = models::bert_for_sequence_classification(small_bert());
  model->eval();
  autograd::NoGradGuard no_grad;
  Tensor ids = arange(12, TensorOptions(DType::Int64)).view({2, 6});
  Tensor logits = model->forward(ids, ones({2, 6}, TensorOptions(DType::Int64)));
  EXPECT_EQ(IntList(logits.sizes()), IntList({2, 2}));
  EXPECT_TRUE(testing::throws_error(
      [&] {
        model->forward(zeros({2, 40}, TensorOptions(DType::Int64)));
      },
      {"BertEmbeddings", "40", "max_position_embeddings"}));
  EXPECT_TRUE(testing::throws_error(
      [&] {
        model->forward(ids, ones({2, 5}, TensorOptions(DType::Int64)));
      },
      {"BertModel", "attention_mask"}));
}

TEST(ModelsBert, DropoutOnlyInTraining) {
  auto model = models::bert(small_bert());
  autograd::NoGradGuard no_grad;
  Tensor ids = arange(16, TensorOptions(DType::Int64)).view({2, 8});
  model->eval();
  Tensor a = model->forward(ids), b = model->forward(ids);
  EXPECT_TRUE(testing::all_close(a, b, 0, 0));
  model->train();
  Tensor c = model->forward(ids);
  EXPECT_FALSE(testing::all_close(a, c, 1e-3, 1e-3));
}

template <typename Model>
std::shared_ptr<Model> loaded(std::shared_ptr<Model> model, const ReferenceData& data) {
  model->load_state_dict(data.with_prefix("state"));
  model->eval();  // dropout off, as in the reference
  return model;
}

models::BertModelOutput run_bert(models::BertModel& model, const ReferenceData& data) {
  return model.forward(data["input.input_ids"], data["input.attention_mask"],
                       data["input.token_type_ids"]);
}

TEST(ModelsReference, BertOutputsMatchHuggingFace) {
  ReferenceData data("bert");
  KILN_REQUIRE_REFERENCE(data);
  auto model = loaded(models::bert(small_bert()), data);
  autograd::NoGradGuard no_grad;
  auto out = run_bert(*model, data);
  EXPECT_TRUE(matches_reference(out.last_hidden_state, data["output.last_hidden_state"]));
  EXPECT_TRUE(matches_reference(out.pooler_output, data["output.pooler_output"]));
}

TEST(ModelsReference, BertGradientsMatchHuggingFace) {
  ReferenceData data("bert");
  KILN_REQUIRE_REFERENCE(data);
  auto model = loaded(models::bert(small_bert()), data);
  auto out = run_bert(*model, data);
  Tensor loss = weighted_sum(data, "last_hidden_state", out.last_hidden_state) +
                weighted_sum(data, "pooler_output", out.pooler_output);
  loss.backward();
  expect_gradients_match(data, *model);
}

Tensor run_classifier(models::BertForSequenceClassification& model, const ReferenceData& data) {
  return model.forward(data["input.input_ids"], data["input.attention_mask"],
                       data["input.token_type_ids"]);
}

TEST(ModelsReference, BertForSequenceClassificationOutputsMatchHuggingFace) {
  ReferenceData data("bert_classifier");
  KILN_REQUIRE_REFERENCE(data);
  auto model = loaded(models::bert_for_sequence_classification(small_bert()), data);
  autograd::NoGradGuard no_grad;
  Tensor logits = run_classifier(*model, data);
  EXPECT_TRUE(matches_reference(logits, data["output.logits"]));
  EXPECT_TRUE(matches_reference(model->loss(logits, data["input.labels"]), data["output.loss"]));
}

TEST(ModelsReference, BertForSequenceClassificationGradientsMatchHuggingFace) {
  ReferenceData data("bert_classifier");
  KILN_REQUIRE_REFERENCE(data);
  auto model = loaded(models::bert_for_sequence_classification(small_bert()), data);
  model->loss(run_classifier(*model, data), data["input.labels"]).backward();
  expect_gradients_match(data, *model);
}

TEST(ModelsGPT2, HuggingFaceNamesAndTiedHead) {
  auto model = models::gpt2(small_gpt2());
  auto sd = model->state_dict();
  EXPECT_EQ(sd.size(), 2u + 2 * 12 + 2 + 1);  // len(GPT2LMHeadModel(config).state_dict())
  EXPECT_TRUE(sd["lm_head.weight"].is_same(sd["transformer.wte.weight"]) ||
              sd["lm_head.weight"].data_ptr() == sd["transformer.wte.weight"].data_ptr());
  // The tied weight is one parameter.
  int64_t n = 0;
  for (const auto& p : model->parameters()) n += p.numel();
  // sum(p.numel() for p in GPT2LMHeadModel(config).parameters()) for the small config.
  EXPECT_EQ(n, 100 * 64 + 32 * 64 +
                   2 * (4 * 64 + 64 * 192 + 192 + 64 * 64 + 64 + 64 * 256 + 256 + 256 * 64 + 64) +
                   2 * 64);
  // Conv1D's layout: (in, out).
  EXPECT_EQ(IntList(sd["transformer.h.0.attn.c_attn.weight"].sizes()), IntList({64, 192}));
}

TEST(ModelsGPT2, CausalityAndPadding) {
  auto model = models::gpt2(small_gpt2());
  model->eval();
  autograd::NoGradGuard no_grad;
  Tensor ids = from_vector<int64_t>({5, 7, 11, 13, 17, 19}, {1, 6});
  Tensor changed = from_vector<int64_t>({5, 7, 11, 13, 17, 42}, {1, 6});
  // Changing the last token leaves every earlier position's logits unchanged.
  Tensor a = model->forward(ids).slice(1, 0, 5), b = model->forward(changed).slice(1, 0, 5);
  EXPECT_TRUE(testing::all_close(a, b, 1e-6, 1e-6));
  // A padded (masked) last token gives the others the logits they have without it.
  Tensor mask = from_vector<int64_t>({1, 1, 1, 1, 1, 0}, {1, 6});
  Tensor masked = model->forward(changed, mask).slice(1, 0, 5);
  EXPECT_TRUE(testing::all_close(masked, a, 1e-5, 1e-6));
}

TEST(ModelsReference, GPT2OutputMatchesHuggingFace) {
  ReferenceData data("gpt2");
  KILN_REQUIRE_REFERENCE(data);
  auto model = loaded(models::gpt2(small_gpt2()), data);
  autograd::NoGradGuard no_grad;
  EXPECT_TRUE(matches_reference(model->forward(data["input.input_ids"]), data["output.logits"]));
}

TEST(ModelsReference, GPT2GradientsMatchHuggingFace) {
  ReferenceData data("gpt2");
  KILN_REQUIRE_REFERENCE(data);
  auto model = loaded(models::gpt2(small_gpt2()), data);
  weighted_sum(data, "logits", model->forward(data["input.input_ids"])).backward();
  expect_gradients_match(data, *model);
}

TEST(ModelsViT, TorchvisionNamesAndInit) {
  auto model = models::vision_transformer(small_vit());
  auto sd = model->state_dict();
  EXPECT_EQ(sd.size(), 4u + 2 * 12 + 2 + 2);  // len(VisionTransformer(...).state_dict())
  for (const char* key :
       {"class_token", "conv_proj.weight", "encoder.pos_embedding",
        "encoder.layers.encoder_layer_1.self_attention.in_proj_weight",
        "encoder.layers.encoder_layer_1.self_attention.out_proj.bias",
        "encoder.layers.encoder_layer_0.mlp.3.weight", "encoder.ln.weight", "heads.head.bias"}) {
    EXPECT_TRUE(sd.contains(key)) << key;
  }
  EXPECT_EQ(IntList(sd["encoder.pos_embedding"].sizes()), IntList({1, 5, 64}));
  EXPECT_EQ(sd["heads.head.weight"].abs().sum().item<double>(), 0.0);
  autograd::NoGradGuard no_grad;
  EXPECT_TRUE(testing::throws_error(
      [&] {
        model->forward(zeros({1, 3, 64, 64}));
      },
      {"VisionTransformer", "32"}));
}

TEST(ModelsReference, ViTOutputMatchesTorchvision) {
  ReferenceData data("vit");
  KILN_REQUIRE_REFERENCE(data);
  auto model = loaded(models::vision_transformer(small_vit()), data);
  autograd::NoGradGuard no_grad;
  EXPECT_TRUE(matches_reference(model->forward(data["input.x"]), data["output.logits"]));
}

TEST(ModelsReference, ViTGradientsMatchTorchvision) {
  ReferenceData data("vit");
  KILN_REQUIRE_REFERENCE(data);
  auto model = loaded(models::vision_transformer(small_vit()), data);
  weighted_sum(data, "logits", model->forward(data["input.x"])).backward();
  expect_gradients_match(data, *model);
}

}  // namespace
}  // namespace kiln
