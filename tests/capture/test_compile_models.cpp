// Compiled Modules: every reference model captures in one graph in inference and gives eager's
// results through the eager backend; training through a compiled module matches eager; module
// names; backend errors.
#include "capture/capture_test_util.h"

#include <kiln/models/models.h>
#include <kiln/optim/sgd.h>

namespace kiln {
namespace {

using testing::all_close;
using testing::RecordingBackend;
using testing::throws_error;

// Compiles `model` (in eval mode, without grad), checks one graph and eager's result, twice.
template <typename M>
void expect_one_graph_like_eager(const std::shared_ptr<M>& model, const Tensor& input,
                                 const std::string& what, size_t min_ops) {
  model->eval();
  autograd::NoGradGuard no_grad;
  const Tensor eager = model->forward(input);
  RecordingBackend rec;
  auto compiled = compile(model, {.backend = rec.backend()});
  for (int i = 0; i < 2; ++i) {
    const Tensor out = (*compiled)(input);
    EXPECT_TRUE(all_close(out, eager, 1e-6, 1e-6)) << what << " call " << i;
  }
  ASSERT_EQ(rec.op_counts->size(), 1u) << what;
  EXPECT_GE((*rec.op_counts)[0], min_ops) << what << "\n" << (*rec.graphs)[0];
  const std::string report = compiled->explain(input);
  EXPECT_NE(report.find("graphs: 1\ngraph breaks: 0"), std::string::npos) << what << "\n" << report;
}

TEST(CompileModels, MlpInOneGraph) {
  manual_seed(1);
  auto model = models::mlp({.in_features = 16, .hidden_features = {32, 32}, .out_features = 8});
  // Three linear layers (t + addmm each) and two GELUs.
  expect_one_graph_like_eager(model, randn({4, 16}), "mlp", 8);
}

TEST(CompileModels, ResNet18InOneGraph) {
  manual_seed(2);
  auto model = models::resnet18(10);
  // 20 convolutions and batch norms alone.
  expect_one_graph_like_eager(model, randn({1, 3, 32, 32}), "resnet18", 40);
}

TEST(CompileModels, BertInOneGraph) {
  manual_seed(3);
  auto model = models::bert({.vocab_size = 100,
                             .hidden_size = 32,
                             .num_hidden_layers = 2,
                             .num_attention_heads = 2,
                             .intermediate_size = 64,
                             .max_position_embeddings = 64});
  expect_one_graph_like_eager(model, randint(0, 100, {2, 16}), "bert", 30);
}

TEST(CompileModels, Gpt2InOneGraph) {
  manual_seed(4);
  auto model =
      models::gpt2({.vocab_size = 100, .n_positions = 64, .n_embd = 32, .n_layer = 2, .n_head = 2});
  expect_one_graph_like_eager(model, randint(0, 100, {1, 16}), "gpt2", 30);
}

TEST(CompileModels, TrainingThroughACompiledModuleMatchesEager) {
  manual_seed(5);
  auto eager_model = models::mlp({.in_features = 8, .hidden_features = {16}, .out_features = 4});
  manual_seed(5);
  auto model = models::mlp({.in_features = 8, .hidden_features = {16}, .out_features = 4});
  auto compiled = compile(model);
  // The compiled module holds the original under PyTorch's name.
  EXPECT_TRUE(compiled->state_dict().contains("_orig_mod.0.weight"));
  EXPECT_EQ(compiled->parameters().size(), model->parameters().size());
  optim::SGD eager_opt(eager_model->parameters(), {.lr = 0.1});
  optim::SGD opt(compiled->parameters(), {.lr = 0.1});
  manual_seed(6);
  const Tensor x = randn({5, 8});
  const Tensor target = randn({5, 4});
  for (int step = 0; step < 3; ++step) {
    eager_opt.zero_grad();
    Tensor eager_loss = nn::functional::mse_loss(eager_model->forward(x), target);
    eager_loss.backward();
    eager_opt.step();
    opt.zero_grad();
    Tensor loss = nn::functional::mse_loss((*compiled)(x), target);
    loss.backward();
    opt.step();
    EXPECT_TRUE(all_close(loss, eager_loss, 1e-6, 1e-7)) << step;
    const auto p = model->parameters(), q = eager_model->parameters();
    for (size_t i = 0; i < p.size(); ++i) {
      EXPECT_TRUE(all_close(p[i], q[i], 1e-6, 1e-7)) << "step " << step << " param " << i;
    }
  }
  EXPECT_EQ(compiled->orig_mod(), model);
}

TEST(CompileModels, BackendErrors) {
  EXPECT_TRUE(throws_error(
      [] { compile([](const Tensor& x) { return x; }, {.backend = std::string("nope")}); },
      {"backend \"nope\" is not registered", "eager"}));
  auto failing = compile([](const Tensor& x) { return x + 1.0; },
                         {.backend = Backend([](const graph::Graph&, std::span<const Tensor>,
                                                const BackendContext&) -> CompiledGraph {
                            throw Error("my backend cannot do this");
                          })});
  EXPECT_TRUE(throws_error([&] { failing(tensor({1.0})); },
                           {"my backend cannot do this", "graph 0 of function compiled at"}));
  EXPECT_TRUE(throws_error([] { compile([](const Tensor& x) { return x; }, {.mode = "fast"}); },
                           {"unknown mode \"fast\""}));
  const std::vector<std::string> names = list_backends();
  EXPECT_NE(std::find(names.begin(), names.end(), "eager"), names.end());
}

}  // namespace
}  // namespace kiln
