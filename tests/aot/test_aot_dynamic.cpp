// aot with dynamic shapes (and the eager backend beside them): the aot backends take graphs traced
// with symbolic sizes and trace them ahead of time with those symbols (functionalized, and
// decomposed to prims for aot_eager_decomp_partition), so one compilation serves every size the
// guards allow; checked against eager at each size, forward and (through a training step) backward.
#include "capture/capture_test_util.h"

#include <gtest/gtest.h>
#include <kiln/capture/mark_dynamic.h>
#include <kiln/kiln.h>

#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace kiln {
namespace {

using testing::all_close;
using testing::LogCapture;

size_t compilations(const LogCapture& logs) { return logs.count("graph: graph 0 of"); }

CompileOptions dynamic_options(const std::string& backend, std::optional<bool> dynamic = true) {
  CompileOptions o;
  o.dynamic = dynamic;
  o.backend = backend;
  return o;
}

class AotDynamic : public ::testing::TestWithParam<std::string> {};

TEST_P(AotDynamic, BertInferenceTracesOnceForEveryBatchAndSequence) {
  if (GetParam() == "eager") GTEST_SKIP() << "no aot graphs to check";
  autograd::NoGradGuard no_grad;
  manual_seed(1);
  auto model = models::bert({.vocab_size = 100,
                             .hidden_size = 32,
                             .num_hidden_layers = 2,
                             .num_attention_heads = 2,
                             .intermediate_size = 64,
                             .max_position_embeddings = 64});
  model->eval();
  LogCapture logs("graph,aot_graphs,perf_hints,recompiles");
  auto fast = compile(model, dynamic_options(GetParam()));
  for (auto [batch, seq] :
       std::vector<std::pair<int64_t, int64_t>>{{2, 12}, {3, 7}, {4, 20}, {5, 33}}) {
    const Tensor ids = randint(0, 100, {batch, seq});
    EXPECT_TRUE(all_close(fast->forward(ids), model->forward(ids), 1e-5, 1e-5))
        << batch << " x " << seq;
  }
  EXPECT_EQ(compilations(logs), 1u) << logs.all();
  // aot traced it (no fallback to the interpreter), with the symbols in its graph.
  EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
  EXPECT_EQ(logs.count("forward (inference) of graph 0"), 1u) << logs.all();
  EXPECT_GT(logs.count("[s0, s1, 32]"), 0u) << logs.all();
}

TEST_P(AotDynamic, AutomaticDynamicCompilesTwiceForFourBatches) {
  autograd::NoGradGuard no_grad;
  manual_seed(2);
  auto model = models::mlp({.in_features = 16, .hidden_features = {32, 32}, .out_features = 8});
  model->eval();
  LogCapture logs("graph,perf_hints");
  auto fast = compile(model, dynamic_options(GetParam(), std::nullopt));
  for (int64_t batch : {3, 5, 7, 12}) {
    const Tensor x = randn({batch, 16});
    EXPECT_TRUE(all_close(fast->forward(x), model->forward(x), 1e-5, 1e-6)) << batch;
  }
  EXPECT_EQ(compilations(logs), 2u) << logs.all();
  EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
}

// A training step per batch size through one compilation: the loss and every gradient match
// eager, from aot's symbolic joint graph (no fallback to the interpreter).
TEST_P(AotDynamic, MlpTrainingStepsMatchEagerAtEveryBatch) {
  manual_seed(3);
  auto eager = models::mlp({.in_features = 12, .hidden_features = {24}, .out_features = 4});
  manual_seed(3);
  auto model = models::mlp({.in_features = 12, .hidden_features = {24}, .out_features = 4});
  auto step = [](const std::shared_ptr<nn::Sequential>& m, const Tensor& x, const Tensor& y) {
    return nn::functional::mse_loss(m->forward(x), y);
  };
  LogCapture logs("graph,perf_hints");
  auto fast = compile([&](const Tensor& x, const Tensor& y) { return step(model, x, y); },
                      dynamic_options(GetParam()));
  for (int64_t batch : {3, 6, 9}) {
    const Tensor x = randn({batch, 12}), y = randn({batch, 4});
    eager->zero_grad();
    model->zero_grad();
    const Tensor want = step(eager, x, y);
    want.backward();
    const Tensor got = fast(x, y);
    got.backward();
    EXPECT_TRUE(all_close(got, want, 1e-5, 1e-6)) << batch;
    const auto pe = eager->parameters(), pm = model->parameters();
    ASSERT_EQ(pe.size(), pm.size());
    for (size_t i = 0; i < pe.size(); ++i) {
      ASSERT_TRUE(pm[i].grad().defined()) << batch << " parameter " << i;
      EXPECT_TRUE(all_close(pm[i].grad(), pe[i].grad(), 1e-5, 1e-6)) << batch << " parameter " << i;
    }
  }
  EXPECT_EQ(compilations(logs), 1u) << logs.all();
  EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
}

// BERT in training mode (dropout draws, seeded alike on both sides) at two sequence lengths: the
// output and every parameter's gradient match eager.
TEST_P(AotDynamic, BertTrainingStepsMatchEagerAtEverySequenceLength) {
  const models::BertConfig config{.vocab_size = 100,
                                  .hidden_size = 32,
                                  .num_hidden_layers = 1,
                                  .num_attention_heads = 2,
                                  .intermediate_size = 64,
                                  .max_position_embeddings = 64};
  manual_seed(4);
  auto eager = models::bert(config);
  manual_seed(4);
  auto model = models::bert(config);
  LogCapture logs("graph,perf_hints");
  auto fast = compile(model, dynamic_options(GetParam()));
  for (int64_t seq : {9, 17}) {
    const Tensor ids = randint(0, 100, {2, seq});
    eager->zero_grad();
    model->zero_grad();
    manual_seed(5);
    const Tensor want = eager->forward(ids);
    want.sum().backward();
    manual_seed(5);
    const Tensor got = fast->forward(ids);
    got.sum().backward();
    EXPECT_TRUE(all_close(got, want, 1e-5, 1e-5)) << seq;
    const auto pe = eager->parameters(), pm = model->parameters();
    ASSERT_EQ(pe.size(), pm.size());
    for (size_t i = 0; i < pe.size(); ++i) {
      // The pooler is not on the path to the sequence output: no gradient on either side.
      ASSERT_EQ(pm[i].grad().defined(), pe[i].grad().defined()) << seq << " parameter " << i;
      if (!pe[i].grad().defined()) continue;
      EXPECT_TRUE(all_close(pm[i].grad(), pe[i].grad(), 1e-4, 1e-5)) << seq << " parameter " << i;
    }
  }
  EXPECT_EQ(compilations(logs), 1u) << logs.all();
  EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
}

// Loss and every parameter's gradient of one training step per size, compiled (dynamic, one
// compilation) against eager on identically seeded twins; aot traces it (no fallback).
// batch_only: only dim 0 dynamic (mark_dynamic), the rest static (ResNet's spatial sizes).
// tol: relative and absolute tolerance of the output, ten times that for the gradients.
void expect_training_steps_match(const std::string& backend,
                                 const std::function<std::shared_ptr<nn::Module>()>& make,
                                 const std::vector<Tensor>& inputs, bool batch_only = false,
                                 double tol = 1e-4) {
  manual_seed(6);
  auto eager = make();
  manual_seed(6);
  auto model = make();
  LogCapture logs("graph,perf_hints");
  auto fast = compile(model, dynamic_options(backend, batch_only ? std::optional<bool>(false)
                                                                 : std::optional<bool>(true)));
  for (const Tensor& x : inputs) {
    if (batch_only) mark_dynamic(x, 0);
    eager->zero_grad();
    model->zero_grad();
    manual_seed(7);
    const Tensor want = (*eager)(x);
    want.sum().backward();
    manual_seed(7);
    const Tensor got = (*fast)(x);
    got.sum().backward();
    EXPECT_TRUE(all_close(got, want, tol, tol)) << ::testing::PrintToString(x.sizes().vec());
    const auto pe = eager->parameters(), pm = model->parameters();
    ASSERT_EQ(pe.size(), pm.size());
    for (size_t i = 0; i < pe.size(); ++i) {
      ASSERT_EQ(pm[i].grad().defined(), pe[i].grad().defined())
          << ::testing::PrintToString(x.sizes().vec()) << " parameter " << i;
      if (!pe[i].grad().defined()) continue;
      EXPECT_TRUE(all_close(pm[i].grad(), pe[i].grad(), 10 * tol, 10 * tol))
          << ::testing::PrintToString(x.sizes().vec()) << " parameter " << i;
    }
  }
  EXPECT_EQ(compilations(logs), 1u) << logs.all();
  if (backend != "eager") {
    EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
  }
}

// In float64: decomposed batch norms and convolution gradients round differently from their
// kernels by an ulp per op, which ResNet's gradients amplify past float32 tolerances (as in
// AotTraining.DecomposedResNet18).
std::shared_ptr<nn::Module> float64_resnet18() {
  auto model = models::resnet18(10);
  model->to(kFloat64);
  return model;
}

TEST_P(AotDynamic, ResNet18TrainingStepsMatchEagerAtEveryBatch) {
  expect_training_steps_match(GetParam(), float64_resnet18,
                              {randn({2, 3, 64, 64}, kFloat64), randn({3, 3, 64, 64}, kFloat64),
                               randn({4, 3, 64, 64}, kFloat64)},
                              /*batch_only=*/true, /*tol=*/1e-9);
}

// Batch, height and width symbolic: one compilation serves images of other sizes (guards keep
// the last stage's rows and columns above 1: 3 each at these sizes); the global average pool
// before the classifier is a mean over a symbolic plane. The decompositions are what this
// checks, so the backends that keep ops whole are skipped.
TEST_P(AotDynamic, ResNet18TrainingStepsMatchEagerAtEveryImageSize) {
  if (GetParam() == "eager" || GetParam() == "aot_eager") GTEST_SKIP() << "no decompositions";
  expect_training_steps_match(GetParam(), float64_resnet18,
                              {randn({2, 3, 64, 72}, kFloat64), randn({3, 3, 80, 64}, kFloat64),
                               randn({2, 3, 96, 88}, kFloat64)},
                              /*batch_only=*/false, /*tol=*/1e-9);
}

// Inference in eval mode with symbolic batch, height and width. The inductor freezes the graph
// as it does a static one: channels-last activations, batch norms folded into the 20
// convolutions, their weights packed (for the example's sizes) and ReLUs fused into them.
TEST_P(AotDynamic, ResNet18InferenceMatchesEagerAtEveryImageSize) {
  autograd::NoGradGuard no_grad;
  manual_seed(8);
  auto model = models::resnet18(10);
  model->eval();
  LogCapture logs("graph,perf_hints,aot_graphs,output_code");
  // Channels-last on every machine (by default only where AVX-512 is: on AVX2 the 1x1
  // convolutions would read their row-major weights as they are).
  CompileOptions options = dynamic_options(GetParam());
  options.options["layout_optimization"] = "true";
  auto fast = compile(model, options);
  for (auto [batch, h, w] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {2, 64, 72}, {3, 80, 64}, {2, 96, 88}, {4, 72, 72}}) {
    const Tensor x = randn({batch, 3, h, w});
    EXPECT_TRUE(all_close(fast->forward(x), model->forward(x), 1e-4, 1e-5))
        << batch << "x3x" << h << "x" << w;
  }
  EXPECT_EQ(compilations(logs), 1u) << logs.all();
  if (GetParam() != "eager") {
    EXPECT_EQ(logs.count("runs with the interpreter"), 0u) << logs.all();
  }
  if (GetParam() == "inductor") {
    const std::string all = logs.all();
    const std::string main_graph = all.substr(all.find("main graph:"));
    // Channels-last activations: oneDNN wants every weight blocked, the 1x1 ones too.
    EXPECT_EQ(testing::occurrences(main_graph, "= _convolution_packed("), 20u) << main_graph;
    EXPECT_EQ(testing::occurrences(main_graph, "= convolution("), 0u) << main_graph;
    EXPECT_EQ(testing::occurrences(main_graph, "'relu')"), 9u) << main_graph;
    EXPECT_EQ(testing::occurrences(main_graph, "batch_norm"), 0u) << main_graph;
    EXPECT_GT(testing::occurrences(main_graph, "f32[s0, 64, ((s"), 0u) << main_graph;
    // The stages' sizes (floor divisions of the symbols) are computed once per kernel call.
    const std::string kernels = logs.generated_kernels();
    EXPECT_GT(testing::occurrences(kernels, "const int64_t ks0 = kiln_floordiv((s"), 0u) << kernels;
    EXPECT_EQ(testing::occurrences(kernels, "kiln_floordiv((s"),
              testing::occurrences(kernels, "= kiln_floordiv((s"))
        << kernels;
  }
}

TEST_P(AotDynamic, Gpt2TrainingStepsMatchEagerAtEverySequenceLength) {
  expect_training_steps_match(
      GetParam(),
      [] {
        return models::gpt2(
            {.vocab_size = 100, .n_positions = 64, .n_embd = 32, .n_layer = 2, .n_head = 2});
      },
      {randint(0, 100, {2, 7}), randint(0, 100, {2, 11}), randint(0, 100, {2, 20})});
}

// The sequence classifier: its pooler reads the first token (select), whose gradient is the
// token's row padded with zeros to the symbolic sequence length.
TEST_P(AotDynamic, BertClassifierTrainingStepsMatchEagerAtEverySequenceLength) {
  expect_training_steps_match(
      GetParam(),
      [] {
        return models::bert_for_sequence_classification({.vocab_size = 100,
                                                         .hidden_size = 32,
                                                         .num_hidden_layers = 1,
                                                         .num_attention_heads = 2,
                                                         .intermediate_size = 64,
                                                         .max_position_embeddings = 64});
      },
      {randint(0, 100, {2, 7}), randint(0, 100, {3, 12}), randint(0, 100, {2, 30})});
}

// slice's gradient pads with zeros; its decomposition branches on whether anything of the
// gradient is kept (x[5:7] is empty at 5 rows), a guard aot adds on the graph's first call. The
// recompilation at 6 rows (that guard failed) traces the same graph under the same capture
// guards and must not reuse the code compiled under the failed one (fuzz seed 372, found by the
// fuzzer's call at other sizes).
TEST_P(AotDynamic, ASliceEmptyAtTheFirstSizeHasTheRightGradientAtTheNext) {
  auto body = [](const Tensor& x) { return x.slice(0, 5, 7); };
  auto fast = compile(body, dynamic_options(GetParam()));
  for (int64_t rows : {5, 6, 7, 5, 6}) {
    const Tensor x = randn({rows, 3}).requires_grad_();
    const Tensor eager_x = x.detach().clone().requires_grad_();
    const Tensor got = fast(x);
    const Tensor want = body(eager_x);
    ASSERT_EQ(got.sizes().vec(), want.sizes().vec()) << rows << " rows";
    EXPECT_TRUE(all_close(got, want)) << rows << " rows";
    (got.sum() + x.sum()).backward();
    (want.sum() + eager_x.sum()).backward();
    EXPECT_TRUE(all_close(x.grad(), eager_x.grad())) << rows << " rows: " << x.grad();
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, AotDynamic,
                         ::testing::Values(std::string("eager"), std::string("aot_eager"),
                                           std::string("aot_eager_decomp_partition"),
                                           std::string("inductor")));

}  // namespace
}  // namespace kiln
