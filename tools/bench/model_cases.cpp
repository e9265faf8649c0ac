// The model workloads of BENCHMARKS.md: mlp, resnet18 and bert (inference and one training step),
// gpt2 (inference). The eager and the compiled side each get their own model and optimizer, built
// from the same seed, so that their first steps start from identical state.
#include <kiln/kiln.h>
#include <kiln/models/models.h>

#include <memory>
#include <string>
#include <utility>

#include "bert_config.h"
#include "case.h"

namespace kiln_bench {
namespace {

namespace F = kiln::nn::functional;
using kiln::nn::Module;
using ModulePtr = std::shared_ptr<Module>;
using OptimizerPtr = std::shared_ptr<kiln::optim::Optimizer>;

// A model and its loss as one Module, so that compile() captures forward and loss as one graph
// (PyTorch's benchmarks compile the same span).
class WithLoss : public Module {
 public:
  using LossFn = std::function<Tensor(const Tensor& output, const Tensor& target)>;
  WithLoss(ModulePtr model, LossFn loss)
      : Module("WithLoss"),
        model_(register_module("model", std::move(model))),
        loss_(std::move(loss)) {}
  Tensor forward(const Tensor& input, const Tensor& target) {
    return loss_(model_->forward(input), target);
  }
  using Module::forward;

 private:
  ModulePtr model_;
  LossFn loss_;
};

// What a model workload is made of: a way to build the model (called once per side, after
// seeding), its input and target, its loss and its optimizer.
struct ModelRecipe {
  std::function<ModulePtr(Shapes)> model;
  std::function<std::pair<Tensor, Tensor>(Shapes)> input_and_target;
  WithLoss::LossFn loss;
  std::function<OptimizerPtr(const ModulePtr&)> optimizer;
};

std::pair<ModulePtr, ModulePtr> twin_models(const ModelRecipe& recipe, Shapes shapes) {
  kiln::manual_seed(0);
  ModulePtr eager = recipe.model(shapes);
  kiln::manual_seed(0);
  ModulePtr compiled = recipe.model(shapes);
  return {eager, compiled};
}

Step inference_step(const ModelRecipe& recipe, const kiln::CompileOptions& options, Shapes shapes) {
  // Plain variables, not structured bindings: lambdas capture them (clang 14 cannot capture
  // bindings).
  const std::pair<ModulePtr, ModulePtr> models = twin_models(recipe, shapes);
  const ModulePtr eager = models.first, plain = models.second;
  eager->eval();
  plain->eval();
  kiln::manual_seed(1);
  Tensor input = recipe.input_and_target(shapes).first;
  auto compiled = kiln::compile(plain, options);
  return {[eager, input] {
            kiln::autograd::NoGradGuard no_grad;
            return std::vector<Tensor>{eager->forward(input)};
          },
          [compiled, input] {
            kiln::autograd::NoGradGuard no_grad;
            return std::vector<Tensor>{(*compiled)(input)};
          }};
}

// One training step: zero_grad, forward and loss, backward, optimizer step. Returns the loss and
// the first parameter after the step. Seeded, so that dropout draws the same masks on both sides.
template <typename Run>
std::vector<Tensor> train_step(const OptimizerPtr& optimizer, const Tensor& first_parameter,
                               Run&& forward_and_loss) {
  kiln::manual_seed(2);
  optimizer->zero_grad();
  Tensor loss = forward_and_loss();
  loss.backward();
  optimizer->step();
  return {loss.detach(), first_parameter.detach().clone()};
}

Step train_step_pair(const ModelRecipe& recipe, const kiln::CompileOptions& options,
                     Shapes shapes) {
  const std::pair<ModulePtr, ModulePtr> models = twin_models(recipe, shapes);
  const ModulePtr eager_model = models.first, plain_model = models.second;
  eager_model->train();
  plain_model->train();
  kiln::manual_seed(1);
  const std::pair<Tensor, Tensor> data = recipe.input_and_target(shapes);
  const Tensor input = data.first, target = data.second;
  auto eager = std::make_shared<WithLoss>(eager_model, recipe.loss);
  auto compiled = kiln::compile(std::make_shared<WithLoss>(plain_model, recipe.loss), options);
  OptimizerPtr eager_opt = recipe.optimizer(eager_model);
  OptimizerPtr compiled_opt = recipe.optimizer(plain_model);
  Tensor eager_param = eager_model->parameters().front();
  Tensor compiled_param = plain_model->parameters().front();
  return {
      [=] {
        return train_step(eager_opt, eager_param, [&] { return eager->forward(input, target); });
      },
      [=] {
        return train_step(compiled_opt, compiled_param, [&] { return (*compiled)(input, target); });
      }};
}

Case model_case(std::string workload, std::string phase, double tolerance, ModelRecipe recipe) {
  const bool train = phase == "train";
  return {std::move(workload), std::move(phase), tolerance, false,
          [recipe = std::move(recipe), train](const kiln::CompileOptions& options, Shapes shapes) {
            return train ? train_step_pair(recipe, options, shapes)
                         : inference_step(recipe, options, shapes);
          }};
}

// ---- the models, at BENCHMARKS.md's CPU shapes or tiny ----

ModelRecipe mlp_recipe() {
  return {[](Shapes shapes) -> ModulePtr {
            if (shapes == Shapes::full) return kiln::models::mlp();
            return kiln::models::mlp(
                {.in_features = 32, .hidden_features = {32, 32}, .out_features = 32});
          },
          [](Shapes shapes) {
            const int64_t batch = shapes == Shapes::full ? 64 : 2;
            const int64_t width = shapes == Shapes::full ? 1024 : 32;
            return std::pair{kiln::randn({batch, width}), kiln::randn({batch, width})};
          },
          [](const Tensor& output, const Tensor& target) { return F::mse_loss(output, target); },
          [](const ModulePtr& model) -> OptimizerPtr {
            return std::make_shared<kiln::optim::SGD>(model->parameters(),
                                                      kiln::optim::SGDOptions{.lr = 0.01});
          }};
}

ModelRecipe resnet18_recipe() {
  return {
      [](Shapes shapes) -> ModulePtr {
        if (shapes == Shapes::full) return kiln::models::resnet18();
        return std::make_shared<kiln::models::ResNet>(
            kiln::models::ResNetConfig{.layers = {1, 1, 1, 1}, .num_classes = 10});
      },
      [](Shapes shapes) {
        const bool full = shapes == Shapes::full;
        // Tiny: batch 2 of 64x64 images, so that the last stage's training batch norm normalizes
        // 8 values per channel (at 32x32 it saw 2, and its output, +-1 whatever the inputs,
        // amplified rounding differences into the gradients past any fixed tolerance).
        Tensor x = full ? kiln::randn({8, 3, 224, 224}) : kiln::randn({2, 3, 64, 64});
        Tensor labels = kiln::randint(0, full ? 1000 : 10, {full ? 8 : 2}, kiln::kInt64);
        return std::pair{x, labels};
      },
      [](const Tensor& logits, const Tensor& labels) { return F::cross_entropy(logits, labels); },
      [](const ModulePtr& model) -> OptimizerPtr {
        return std::make_shared<kiln::optim::SGD>(
            model->parameters(), kiln::optim::SGDOptions{.lr = 0.01, .momentum = 0.9});
      }};
}

ModelRecipe bert_recipe() {
  return {
      [](Shapes shapes) -> ModulePtr {
        return kiln::models::bert_for_sequence_classification(bert_config(shapes));
      },
      [](Shapes shapes) {
        const bool full = shapes == Shapes::full;
        Tensor ids = kiln::randint(0, bert_config(shapes).vocab_size,
                                   {full ? 4 : 1, full ? 128 : 8}, kiln::kInt64);
        return std::pair{ids, kiln::randint(0, 2, {full ? 4 : 1}, kiln::kInt64)};
      },
      // BertForSequenceClassification's loss for 2 labels: cross-entropy.
      [](const Tensor& logits, const Tensor& labels) { return F::cross_entropy(logits, labels); },
      [](const ModulePtr& model) -> OptimizerPtr {
        return std::make_shared<kiln::optim::AdamW>(model->parameters(),
                                                    kiln::optim::AdamWOptions{.lr = 2e-5});
      }};
}

ModelRecipe gpt2_recipe() {
  auto config = [](Shapes shapes) -> kiln::models::GPT2Config {
    if (shapes == Shapes::full) return {};  // GPT-2 small
    return {.vocab_size = 100, .n_positions = 64, .n_embd = 32, .n_layer = 2, .n_head = 2};
  };
  return {
      [config](Shapes shapes) -> ModulePtr { return kiln::models::gpt2(config(shapes)); },
      [config](Shapes shapes) {
        const bool full = shapes == Shapes::full;
        Tensor ids = kiln::randint(0, config(shapes).vocab_size, {1, full ? 256 : 8}, kiln::kInt64);
        return std::pair{ids, Tensor()};
      },
      nullptr, nullptr};
}

}  // namespace

std::vector<Case> model_cases() {
  // Whole models accumulate rounding differences over many layers (training steps also over the
  // backward pass, through batch norms over few values per channel at tiny shapes): looser
  // tolerances than single ops.
  return {model_case("mlp", "inference", 1e-4, mlp_recipe()),
          model_case("mlp", "train", 1e-4, mlp_recipe()),
          model_case("resnet18", "inference", 1e-3, resnet18_recipe()),
          model_case("resnet18", "train", 1e-3, resnet18_recipe()),
          model_case("bert", "inference", 1e-3, bert_recipe()),
          model_case("bert", "train", 1e-3, bert_recipe()),
          model_case("gpt2", "inference", 1e-3, gpt2_recipe())};
}

}  // namespace kiln_bench
